/**
 * HTTP plumbing shared by the route modules: request ids, reading JSON and raw bodies within
 * their size limits and content types, bearer authentication, and a small route table that
 * both mounts the handlers and lets tests check that the OpenAPI document covers every route.
 */
import type { IncomingMessage } from 'node:http';
import type { Request, RequestHandler, Response, Router } from 'express';
import { ApiError } from '../errors.js';
import { newRequestId } from '../services/ids.js';
import type { Actor, ApiKeyScope } from '../storage/seller-records.js';

/** One HTTP operation. `path` uses OpenAPI's `{param}` form. */
export interface RouteDef {
  method: 'get' | 'post' | 'patch' | 'delete';
  path: string;
  /** Whether a bearer token is required. */
  auth: boolean;
  /**
   * With `auth`: whether an account whose address is not verified may call it (its own
   * account and sessions only); every other authenticated route answers it `EMAIL_NOT_VERIFIED`.
   */
  allowUnverified?: boolean;
  /**
   * With `auth`: the handler checks the caller's session and verified address itself, in the
   * same statement as its work (the key release, `iki_release`), so the middleware only
   * verifies the access token's signature and expiry and looks nothing up. Every outcome of
   * the full check must then still be reached by the handler, before any other answer.
   */
  sessionCheckedByHandler?: boolean;
  /**
   * With `auth`: the scope an API key needs to call it (issue 26 item 1). A route without one
   * refuses every API key (`API_KEY_NOT_ALLOWED`): only sessions may call it.
   */
  scope?: ApiKeyScope;
  handler: (req: Request, res: Response) => Promise<void>;
}

/**
 * Resolves a bearer token to the caller (`AccountService.authenticate`, or `ApiKeyService`
 * for an `iki_sk_` key, which names its key and scopes).
 */
export type Authenticate = (token: string, allowUnverified: boolean, deferSessionCheck: boolean) =>
Promise<{ accountId: string; sessionId: string | undefined; apiKey?: { id: string; scopes: readonly ApiKeyScope[] } }>;

/** Assigns a request id, echoed in `X-Request-Id` and every error body. */
export const requestId: RequestHandler = (_req, res, next) => {
  const id = newRequestId();
  res.locals['requestId'] = id;
  res.setHeader('X-Request-Id', id);
  next();
};

/** The authenticated caller's session id (local tokens; set by `mount` for routes with `auth`). */
export function sessionOf(res: Response): string | undefined {
  const id = res.locals['sessionId'];
  return typeof id === 'string' ? id : undefined;
}

/** Who is acting: the caller's account and, when the request came with an API key, that key. */
export function actorOf(res: Response): Actor {
  const apiKeyId = res.locals['apiKeyId'];
  return { accountId: callerOf(res), ...(typeof apiKeyId === 'string' ? { apiKeyId } : {}) };
}

/** The authenticated caller's account id (set by `mount` for routes with `auth`). */
export function callerOf(res: Response): string {
  const id = res.locals['accountId'];
  if (typeof id !== 'string') throw new Error('route without authentication asked for the caller');
  return id;
}

/**
 * Refuses an API key on a route it may not call: `API_KEY_NOT_ALLOWED` without a route scope,
 * `INSUFFICIENT_SCOPE` (RFC 6750 §3.1) when the key lacks it.
 */
function checkScope(res: Response, scopes: readonly ApiKeyScope[], scope: ApiKeyScope | undefined): void {
  if (scope === undefined) {
    throw new ApiError('API_KEY_NOT_ALLOWED', 'an API key cannot do this; sign in as the account');
  }
  if (!scopes.includes(scope)) {
    res.setHeader('WWW-Authenticate', `Bearer realm="iki", error="insufficient_scope", scope="${scope}"`);
    throw new ApiError('INSUFFICIENT_SCOPE', `this API key lacks the scope ${scope}`, { required: scope });
  }
}

function bearerAuth(authenticate: Authenticate, allowUnverified: boolean, deferSessionCheck: boolean,
  scope: ApiKeyScope | undefined): RequestHandler {
  return async (req, res, next) => {
    const header = req.get('authorization') ?? '';
    const match = /^Bearer ([A-Za-z0-9._~+/-]+=*)$/.exec(header);
    if (match?.[1] === undefined) {
      res.setHeader('WWW-Authenticate', 'Bearer realm="iki"');
      throw new ApiError('UNAUTHENTICATED', 'an access token is required (Authorization: Bearer)');
    }
    let apiKey: { id: string; scopes: readonly ApiKeyScope[] } | undefined;
    try {
      const caller = await authenticate(match[1], allowUnverified, deferSessionCheck);
      res.locals['accountId'] = caller.accountId;
      res.locals['sessionId'] = caller.sessionId;
      apiKey = caller.apiKey;
    } catch (err) {
      res.setHeader('WWW-Authenticate', 'Bearer realm="iki", error="invalid_token"');
      throw err;
    }
    if (apiKey !== undefined) {
      checkScope(res, apiKey.scopes, scope);
      res.locals['apiKeyId'] = apiKey.id;
    }
    next();
  };
}

/** Express path of an OpenAPI path: `{id}` becomes `:id`. */
export const expressPath = (path: string): string => path.replace(/\{([A-Za-z]+)\}/g, ':$1');

/**
 * Mounts the routes; unknown methods on known paths answer `METHOD_NOT_ALLOWED` with the
 * `Allow` header listing the path's methods (RFC 9110 §15.5.6; HEAD wherever GET is, as
 * Express answers it).
 */
export function mount(router: Router, routes: readonly RouteDef[], authenticate: Authenticate): void {
  for (const route of routes) {
    const handler: RequestHandler = async (req, res) => route.handler(req, res);
    if (route.auth) {
      router[route.method](expressPath(route.path),
        bearerAuth(authenticate, route.allowUnverified === true, route.sessionCheckedByHandler === true, route.scope), handler);
    } else router[route.method](expressPath(route.path), handler);
  }
  const patterns = routes.map((r) => ({ method: r.method, test: new RegExp(`^${r.path.replace(/\{[A-Za-z]+\}/g, '[^/]+')}$`) }));
  router.use((req, _res, next) => {
    const methods = new Set(patterns.filter((p) => p.test.test(req.path))
      .flatMap((p) => (p.method === 'get' ? ['GET', 'HEAD'] : [p.method.toUpperCase()])));
    if (methods.size > 0) {
      const allow = ['GET', 'HEAD', 'POST', 'PATCH', 'DELETE'].filter((m) => methods.has(m)).join(', ');
      throw new ApiError('METHOD_NOT_ALLOWED', `${req.method} is not allowed here; use ${allow}`, undefined, { Allow: allow });
    }
    next();
  });
}

/*
 * The body helpers below read `req.headers` (what Express's `req.get` reads) so that they
 * serve both the Express routes and the key release's own handler (release-fast.ts).
 */
function mediaType(req: IncomingMessage): { type: string; charset: string | undefined } {
  const [type = '', ...params] = (req.headers['content-type'] ?? '').split(';');
  const charset = params.map((p) => p.trim().toLowerCase()).find((p) => p.startsWith('charset='));
  return { type: type.trim().toLowerCase(), charset: charset?.slice('charset='.length).replace(/"/g, '') };
}

function hasBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  if (length !== undefined) return length !== '0';
  return req.headers['transfer-encoding'] !== undefined;
}

function tooLarge(max: number): ApiError {
  return new ApiError('PAYLOAD_TOO_LARGE', `the request body exceeds ${max} bytes`, { max });
}

/** Refuses a body whose declared length is already above `max`. */
function checkDeclaredLength(req: IncomingMessage, max: number): void {
  const declared = Number(req.headers['content-length'] ?? '0');
  if (declared > max) throw tooLarge(max);
}

/** Strict UTF-8 (a whole buffer at a time, so one decoder serves every request). */
const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** Reads the whole body, stopping with `PAYLOAD_TOO_LARGE` as soon as it passes `max` bytes. */
async function readAll(req: IncomingMessage, max: number): Promise<Buffer> {
  checkDeclaredLength(req, max);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > max) throw tooLarge(max);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size);
}

/**
 * Reads a JSON body (`application/json`, UTF-8). Returns undefined when there is no body;
 * wrong media type is `UNSUPPORTED_MEDIA_TYPE`, bad UTF-8 or JSON is `MALFORMED_JSON`.
 */
export async function readJson(req: IncomingMessage, max: number): Promise<unknown> {
  if (!hasBody(req)) return undefined;
  const { type, charset } = mediaType(req);
  if (type !== 'application/json' || (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8')) {
    throw new ApiError('UNSUPPORTED_MEDIA_TYPE', 'the body must be application/json in UTF-8');
  }
  const raw = await readAll(req, max);
  if (raw.length === 0) return undefined;
  try {
    return JSON.parse(UTF8.decode(raw)) as unknown;
  } catch {
    throw new ApiError('MALFORMED_JSON', 'the body is not valid JSON');
  }
}

/** A JSON body that must be present. */
export async function requireJson(req: IncomingMessage, max: number): Promise<unknown> {
  const body = await readJson(req, max);
  if (body === undefined) throw new ApiError('VALIDATION_FAILED', 'a JSON body is required');
  return body;
}

/** Checks the media type of a raw body against `allowed`; returns the one used. */
export function rawType<T extends string>(req: Request, allowed: readonly T[]): T {
  const { type } = mediaType(req);
  const found = allowed.find((a) => a === type);
  if (found === undefined) {
    throw new ApiError('UNSUPPORTED_MEDIA_TYPE', `the body must be one of ${allowed.join(', ')}`, { allowed });
  }
  return found;
}

/** Reads a whole raw body of at most `max` bytes. */
export async function readRaw(req: Request, max: number): Promise<Uint8Array> {
  return new Uint8Array(await readAll(req, max));
}

/** The body's Content-Length, when it declares one. */
export function declaredLength(req: Request): number | undefined {
  const length = req.get('content-length');
  return length === undefined || !/^[0-9]+$/.test(length) ? undefined : Number(length);
}

/** The body as a stream of chunks, after checking its declared length. */
export function streamBody(req: Request, max: number): AsyncIterable<Uint8Array> {
  checkDeclaredLength(req, max);
  return req as AsyncIterable<Uint8Array>;
}

/** A path parameter that must match `pattern`, else `code` (a 404 for ids). */
export function param(req: Request, name: string, pattern: RegExp, code: 'LICENSE_NOT_FOUND' | 'MASTER_NOT_FOUND' | 'SIGNING_KEY_NOT_FOUND' | 'SESSION_NOT_FOUND'
  | 'WEBHOOK_NOT_FOUND' | 'WEBHOOK_DELIVERY_NOT_FOUND'): string {
  const value = req.params[name];
  if (typeof value !== 'string' || !pattern.test(value)) throw new ApiError(code, 'no such resource');
  return value;
}

/**
 * The origin the request was sent to (`http://localhost:8080`), from the Host header (and,
 * with `trust proxy` (IKI_TRUST_PROXY), X-Forwarded-Proto and X-Forwarded-Host as Express reads
 * them), but only when its host is a loopback name: `localhost`, `127.0.0.0/8` or `[::1]`.
 * Undefined otherwise, and when it is not a plain host[:port]. Used for links only when
 * IKI_PUBLIC_URL is not configured (issue 22 item 4): a Host header is the client's to choose,
 * so a name another machine could answer to would let anyone who asks for a reset link have
 * it point at their own server. A loopback name reaches only the machine the request came
 * from, which is the service's own laptop-and-log setting; a service mailing links over SMTP
 * must have IKI_PUBLIC_URL (config.ts refuses to start without it).
 */
export function requestOrigin(req: Request): string | undefined {
  const origin = hostOrigin(req);
  return origin !== undefined && isLoopbackName(new URL(origin).hostname) ? origin : undefined;
}

/**
 * The origin the request was sent to, whatever its host (Host, or X-Forwarded-Host behind a
 * trusted proxy): what a browser's `Origin` header carries for a page of this service, so the
 * same-origin test of the CORS check (routes/cors.ts). Never a base for links (see
 * `requestOrigin`). Undefined when it is not a plain host[:port].
 */
export function hostOrigin(req: Request): string | undefined {
  // Express 5's `req.host`: the Host header with its port, or X-Forwarded-Host from a trusted proxy.
  const host: string | undefined = req.host;
  if (host === undefined || !/^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(:\d{1,5})?$/u.test(host)) return undefined;
  try {
    return new URL(`${req.protocol}://${host}`).origin;
  } catch {
    return undefined;
  }
}

/** Whether `hostname` (as `URL.hostname` gives it) names this machine's loopback interface. */
export function isLoopbackName(hostname: string): boolean {
  const name = hostname.toLowerCase();
  return name === 'localhost' || name === '[::1]' || /^127(\.\d{1,3}){3}$/u.test(name);
}
