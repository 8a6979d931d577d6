/**
 * The few calls the CLI makes to an iki licensing service (`server/`; the HTTP API is its
 * OpenAPI document at `/api/openapi.json`): sign in, the caller's account, signing-key
 * registration and the service's public keys.
 *
 * A refusal keeps the service's stable code and its request id (`iki: EMAIL_NOT_VERIFIED:
 * ... (HTTP 403, request id ...)`). A connection that fails or times out is
 * `SERVICE_UNREACHABLE`; an answer that is not the API's JSON (a proxy's error page, a
 * redirect) is `HTTP_ERROR`. Redirects are not followed, so a bearer token or password is
 * only ever sent to the address the user gave.
 */
import { hostname } from 'node:os';
import { fromBase64Url } from '../keys.js';
import { CliError, UsageError } from './errors.js';

/** How long one request may take before it is given up. */
export const REQUEST_TIMEOUT_MS = 30_000;
/** Largest answer read, in bytes (the answers used here are a few hundred bytes of JSON). */
const MAX_ANSWER_BYTES = 1024 * 1024;

/** A service's base URL from `option`: http or https, without query, fragment or credentials. */
export function parseServiceUrl(text: string, option = '--service'): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new UsageError(`${option} ${JSON.stringify(text)} is not a URL (e.g. https://iki.example or http://127.0.0.1:8080)`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError(`${option} must be an http:// or https:// URL`);
  if (url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '') {
    throw new UsageError(`${option} must be a base URL without credentials, query or fragment`);
  }
  if (!url.pathname.endsWith('/')) url.pathname += '/';
  return url;
}

/** The base URL as the user would write it (no trailing slash). */
export function showUrl(base: URL): string {
  return base.href.replace(/\/$/u, '');
}

/** Whether requests to `base` stay on this machine (plain http is then harmless). */
export function isLoopback(base: URL): boolean {
  return ['localhost', '[::1]'].includes(base.hostname) || /^127\.\d+\.\d+\.\d+$/u.test(base.hostname);
}

/** One request's answer: its status, headers and parsed JSON body. */
interface Answer {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
}

async function readBody(response: Response): Promise<Uint8Array> {
  if (response.body === null) return new Uint8Array(0);
  const parts: Uint8Array[] = [];
  let size = 0;
  for await (const part of response.body as unknown as AsyncIterable<Uint8Array>) {
    size += part.length;
    // Leaving the loop cancels the stream.
    if (size > MAX_ANSWER_BYTES) throw new CliError('HTTP_ERROR', `the answer is larger than ${MAX_ANSWER_BYTES} bytes`);
    parts.push(part);
  }
  return Buffer.concat(parts);
}

/** The JSON object of an answer, or undefined when it is not one. */
async function jsonOf(response: Response): Promise<Record<string, unknown> | undefined> {
  if (!(response.headers.get('content-type') ?? '').includes('application/json')) {
    await response.body?.cancel();
    return undefined;
  }
  try {
    const value: unknown = JSON.parse(Buffer.from(await readBody(response)).toString('utf8'));
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? value as Record<string, unknown> : undefined;
  } catch (error) {
    if (error instanceof CliError) throw error;
    return undefined;
  }
}

/** What to do next after a refusal a person commonly meets, by the service's code. */
function nextStep(code: string, base: URL): string {
  const home = `${showUrl(base)}/`;
  const steps: Record<string, string> = {
    INVALID_CREDENTIALS: `check the e-mail address and password (no account yet? sign up at ${home})`,
    EMAIL_NOT_VERIFIED: `open the link in the verification e-mail first (${home} sends a new one)`,
    UNAUTHENTICATED: 'sign in again with --email, or give a fresh --token',
    SIGNING_KEY_TAKEN: 'this key is registered to another account; make a new one with iki keygen',
    SIGNING_KEY_REVOKED: 'this key was revoked; make a new one with iki keygen and register it',
    SIGN_IN_THROTTLED: 'wait a while (Retry-After says how long) and try again',
    MAIL_THROTTLED: 'wait a while (Retry-After says how long) and try again',
    SERVICE_STARTING: 'the service is starting; try again in a few seconds',
  };
  return steps[code] === undefined ? '' : `; ${steps[code]}`;
}

/** The CliError for a refusal: the service's code and request id when it sent its error body. */
function refusal(what: string, response: Response, body: Record<string, unknown> | undefined, base: URL): CliError {
  const error = body?.error as { code?: unknown; message?: unknown; requestId?: unknown } | undefined;
  const requestId = typeof error?.requestId === 'string' ? error.requestId : response.headers.get('x-request-id');
  const context = `HTTP ${response.status}${requestId === null ? '' : `, request id ${requestId}`}`;
  if (typeof error?.code === 'string' && /^[A-Z][A-Z0-9_]+$/u.test(error.code)) {
    const message = typeof error.message === 'string' ? error.message : 'refused';
    return new CliError(error.code, `${what}: ${message} (${context})${nextStep(error.code, base)}`);
  }
  if (response.status >= 300 && response.status < 400) {
    const location = response.headers.get('location') ?? 'elsewhere';
    return new CliError('HTTP_ERROR', `${what}: the service redirects to ${location}; give that address as --service (${context})`);
  }
  return new CliError('HTTP_ERROR', `${what}: unexpected answer ${response.status} ${response.statusText} (${context})`);
}

function unreachable(base: URL, error: unknown): CliError {
  const { name, cause } = error as { name?: string; cause?: { code?: string; message?: string } };
  if (name === 'TimeoutError') return new CliError('SERVICE_UNREACHABLE', `${showUrl(base)} did not answer within ${REQUEST_TIMEOUT_MS / 1000} s`);
  const why = cause?.code ?? cause?.message ?? (error as Error).message;
  return new CliError('SERVICE_UNREACHABLE', `cannot reach ${showUrl(base)} (${why}); is the service running, and is `
    + '--service the address you open its pages at?');
}

/** Calls `method path` of the service at `base`; resolves to a 2xx JSON answer, else throws. */
export async function callService(base: URL, method: 'GET' | 'POST' | 'DELETE', path: string,
  options: { token?: string; json?: unknown; headers?: Record<string, string> } = {}): Promise<Answer> {
  const headers: Record<string, string> = { ...options.headers, accept: 'application/json' };
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
  if (options.json !== undefined) headers['content-type'] = 'application/json';
  const url = new URL(path.replace(/^\//u, ''), base);
  let response: Response;
  try {
    response = await fetch(url, { method, headers, redirect: 'manual', signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      ...(options.json === undefined ? {} : { body: JSON.stringify(options.json) }) });
  } catch (error) {
    throw unreachable(base, error);
  }
  // A deletion answers 204 without a body.
  if (response.status === 204) return { status: 204, headers: response.headers, body: {} };
  const body = await jsonOf(response).catch((error: unknown) => {
    throw error instanceof CliError ? error : unreachable(base, error);
  });
  const what = `${method} ${path}`;
  if (response.status < 200 || response.status > 299) throw refusal(what, response, body, base);
  if (body === undefined) throw new CliError('HTTP_ERROR', `${what}: the answer is not JSON; is ${showUrl(base)} an iki service?`);
  return { status: response.status, headers: response.headers, body };
}

/** `field` of an answer, which must be a non-empty string. */
export function stringField(answer: Answer, field: string, what: string): string {
  const value = answer.body[field];
  if (typeof value !== 'string' || value === '') throw new CliError('HTTP_ERROR', `${what}: the answer has no ${field}`);
  return value;
}

/**
 * Signs in with e-mail and password (`POST /api/sessions`); resolves to the access token. The
 * refresh token is asked for in the body (no cookie) and dropped: a one-off command needs the
 * 15-minute access token only (`iki login` keeps a session instead).
 */
export async function signIn(base: URL, email: string, password: string): Promise<string> {
  const json = { email, password, device: `iki CLI on ${hostname()} (one command)`, refreshTokenIn: 'body' };
  return stringField(await callService(base, 'POST', '/api/sessions', { json }), 'accessToken', 'POST /api/sessions');
}

/** The signed-in account's id (`GET /api/me`). */
export async function accountId(base: URL, token: string): Promise<string> {
  return stringField(await callService(base, 'GET', '/api/me', { token }), 'accountId', 'GET /api/me');
}

/** What `POST /api/keys/signing` answered. */
export interface Registration {
  /** The key certificate (docs/format.md 7.2), base64url. */
  certificate: string;
  /** False when the key was registered already (the certificate is fresh either way). */
  created: boolean;
}

/** Registers a signing key with its proof of possession (`POST /api/keys/signing`). */
export async function registerSigningKey(base: URL, token: string,
  body: { publicKey: string; proof: string; name?: string }): Promise<Registration> {
  const answer = await callService(base, 'POST', '/api/keys/signing', { token, json: body });
  return { certificate: stringField(answer, 'certificate', 'POST /api/keys/signing'), created: answer.status === 201 };
}

/** The service's X25519 recipient key (`GET /api/keys/service`). */
export async function serviceRecipient(base: URL): Promise<Uint8Array> {
  const text = stringField(await callService(base, 'GET', '/api/keys/service'), 'x25519PublicKey', 'GET /api/keys/service');
  try {
    return fromBase64Url(text, 32);
  } catch {
    throw new CliError('HTTP_ERROR', 'GET /api/keys/service: x25519PublicKey is not a 32-byte base64url key');
  }
}
