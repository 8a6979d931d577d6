/**
 * The app's client of the key service (SPEC "What the service does" 4, behaviour rule 7;
 * docs/format.md sections 7.2, 8.2 and 8.3; the HTTP contract is the service's OpenAPI
 * document at `/api/openapi.json`): the service's public keys, signing-key registration,
 * status, listing and revocation, and account-slot wrap and unwrap.
 *
 * One place knows these endpoints; the transport is pluggable so that the browser (plain
 * `fetch` with the session's bearer token) and the CLI (its own requests with timeouts and
 * its error lines) share it. A refusal of the service is a {@link ServiceError} carrying the
 * service's stable code and request id; a transport that cannot reach the service throws a
 * `ServiceError` with code `SERVICE_UNREACHABLE`, which readers treat as offline.
 */
import { fromBase64Url, toBase64Url } from './keys.js';
import type { SealedKey } from './service.js';

/** The service refused, or could not be reached (`SERVICE_UNREACHABLE`). */
export class ServiceError extends Error {
  /** The service's stable code (`FORBIDDEN`, `SIGNING_KEY_NOT_FOUND`, ...). */
  readonly code: string;
  /** HTTP status; 0 when the service was not reached. */
  readonly status: number;
  /** The service's request id, to quote to its operator. */
  readonly requestId: string | undefined;

  constructor(code: string, message: string, status: number, requestId?: string) {
    super(message);
    this.name = 'ServiceError';
    this.code = code;
    this.status = status;
    this.requestId = requestId;
  }
}

/** One request: resolves to the JSON body of a 2xx answer, throws {@link ServiceError} otherwise. */
export type ServiceRequest = (method: 'GET' | 'POST', path: string, json?: unknown) => Promise<Record<string, unknown>>;

/** The service's public keys (`GET /api/keys/service`). */
export interface ServicePublicKeys {
  /** The service identifier (its base URL). */
  service: string;
  /** X25519 key that account slots and masters are sealed to. */
  x25519PublicKey: Uint8Array;
  /** Ed25519 key that signs key certificates (docs/format.md 7.2 issuer_key). */
  certificatePublicKey: Uint8Array;
  /** Ed25519 key that signs license copies. */
  licenseSigningPublicKey: Uint8Array;
}

/** A registered signing key as the service shows it. */
export interface SigningKeyStatus {
  publicKey: string;
  accountId: string;
  name: string;
  status: 'active' | 'revoked';
  createdAt: string;
  revokedAt: string | null;
}

/** What the app asks of the key service. */
export interface KeyServiceApi {
  serviceKeys(): Promise<ServicePublicKeys>;
  /** The signed-in account (`GET /api/me`). */
  me(): Promise<{ accountId: string; email?: string }>;
  /** Registers (or re-certifies) a key with its proof of possession; its certificate (base64url). */
  registerKey(publicKey: Uint8Array, proof: Uint8Array, name?: string): Promise<{ certificate: string; key: SigningKeyStatus }>;
  /** Public status of a key; `undefined` when the service does not know it. */
  keyStatus(publicKey: Uint8Array): Promise<SigningKeyStatus | undefined>;
  /** The signed-in account's keys. */
  listKeys(): Promise<SigningKeyStatus[]>;
  /** Revokes one of the signed-in account's keys. */
  revokeKey(publicKey: Uint8Array | string): Promise<SigningKeyStatus>;
  /** An account slot's blob for the signed-in account, from a content key sealed to the service. */
  wrap(sealed: SealedKey): Promise<{ accountId: string; blob: Uint8Array }>;
  /** Opens an account slot for the signed-in account it names; the key sealed to `publicKey`. */
  unwrap(accountId: string, blob: Uint8Array, publicKey: Uint8Array): Promise<SealedKey>;
}

const text = (body: Record<string, unknown>, field: string, what: string): string => {
  const value = body[field];
  if (typeof value !== 'string' || value === '') throw new ServiceError('HTTP_ERROR', `${what}: the answer has no ${field}`, 200);
  return value;
};

const bytes = (body: Record<string, unknown>, field: string, what: string, length?: number): Uint8Array => {
  try {
    return fromBase64Url(text(body, field, what), length);
  } catch (error) {
    if (error instanceof ServiceError) throw error;
    throw new ServiceError('HTTP_ERROR', `${what}: ${field} is not base64url${length === undefined ? '' : ` of ${length} bytes`}`, 200);
  }
};

function keyStatus(body: Record<string, unknown>, what: string): SigningKeyStatus {
  const status = body.status;
  if (status !== 'active' && status !== 'revoked') throw new ServiceError('HTTP_ERROR', `${what}: the answer has no status`, 200);
  return {
    publicKey: text(body, 'publicKey', what), accountId: text(body, 'accountId', what),
    name: typeof body.name === 'string' ? body.name : '', status,
    createdAt: typeof body.createdAt === 'string' ? body.createdAt : '',
    revokedAt: typeof body.revokedAt === 'string' ? body.revokedAt : null,
  };
}

/** The key service's endpoints over `request`. */
export function keyServiceClient(request: ServiceRequest): KeyServiceApi {
  return {
    async serviceKeys() {
      const what = 'GET /api/keys/service';
      const body = await request('GET', '/api/keys/service');
      return {
        service: typeof body.service === 'string' ? body.service : '',
        x25519PublicKey: bytes(body, 'x25519PublicKey', what, 32),
        certificatePublicKey: bytes(body, 'certificatePublicKey', what, 32),
        licenseSigningPublicKey: bytes(body, 'licenseSigningPublicKey', what, 32),
      };
    },
    async me() {
      const body = await request('GET', '/api/me');
      return { accountId: text(body, 'accountId', 'GET /api/me'), ...(typeof body.email === 'string' ? { email: body.email } : {}) };
    },
    async registerKey(publicKey, proof, name) {
      const body = await request('POST', '/api/keys/signing', {
        publicKey: toBase64Url(publicKey), proof: toBase64Url(proof), ...(name === undefined ? {} : { name }),
      });
      const what = 'POST /api/keys/signing';
      return { certificate: text(body, 'certificate', what), key: keyStatus(body, what) };
    },
    async keyStatus(publicKey) {
      const path = `/api/keys/signing/${toBase64Url(publicKey)}`;
      try {
        return keyStatus(await request('GET', path), `GET ${path}`);
      } catch (error) {
        if (error instanceof ServiceError && error.code === 'SIGNING_KEY_NOT_FOUND') return undefined;
        throw error;
      }
    },
    async listKeys() {
      const body = await request('GET', '/api/keys/signing');
      const keys = body.keys;
      if (!Array.isArray(keys)) throw new ServiceError('HTTP_ERROR', 'GET /api/keys/signing: the answer has no keys', 200);
      return keys.map((k) => keyStatus(k as Record<string, unknown>, 'GET /api/keys/signing'));
    },
    async revokeKey(publicKey) {
      const key = typeof publicKey === 'string' ? publicKey : toBase64Url(publicKey);
      const path = `/api/keys/signing/${encodeURIComponent(key)}/revoke`;
      return keyStatus(await request('POST', path, {}), `POST ${path}`);
    },
    async wrap(sealed) {
      const what = 'POST /api/keys/wrap';
      const body = await request('POST', '/api/keys/wrap', {
        ephemeralPublicKey: toBase64Url(sealed.ephemeral), nonce: toBase64Url(sealed.nonce), sealedKey: toBase64Url(sealed.sealed),
      });
      return { accountId: text(body, 'accountId', what), blob: bytes(body, 'blob', what) };
    },
    async unwrap(accountId, blob, publicKey) {
      const what = 'POST /api/keys/unwrap';
      const body = await request('POST', '/api/keys/unwrap', { accountId, blob: toBase64Url(blob), publicKey: toBase64Url(publicKey) });
      return {
        ephemeral: bytes(body, 'ephemeralPublicKey', what, 32), nonce: bytes(body, 'nonce', what, 24),
        sealed: bytes(body, 'sealedKey', what, 48),
      };
    },
  };
}

/** Options of {@link fetchRequest}. */
export interface FetchRequestOptions {
  /** The bearer token of the session, asked for at each request (none: signed out). */
  token?: () => string | undefined;
  /** How long a request may take; 30 s by default. */
  timeoutMs?: number;
  /** The `fetch` to use (tests). */
  fetch?: typeof fetch;
}

/** Largest answer read, in bytes (the key service's answers are a few hundred bytes). */
const MAX_ANSWER_BYTES = 1024 * 1024;

/**
 * A {@link ServiceRequest} over `fetch` to the service at `base` (its base URL; in a page,
 * `location.origin`). Redirects are not followed, so the token goes only to `base`.
 */
export function fetchRequest(base: string | URL, options: FetchRequestOptions = {}): ServiceRequest {
  const root = new URL(base);
  if (!root.pathname.endsWith('/')) root.pathname += '/';
  const run = options.fetch ?? fetch;
  return async (method, path, json) => {
    const headers: Record<string, string> = { accept: 'application/json' };
    const token = options.token?.();
    if (token !== undefined) headers.authorization = `Bearer ${token}`;
    if (json !== undefined) headers['content-type'] = 'application/json';
    let response: Response;
    try {
      response = await run(new URL(path.replace(/^\//u, ''), root), {
        method, headers, redirect: 'manual', credentials: 'omit', cache: 'no-store',
        signal: AbortSignal.timeout(options.timeoutMs ?? 30_000),
        ...(json === undefined ? {} : { body: JSON.stringify(json) }),
      });
    } catch (error) {
      throw new ServiceError('SERVICE_UNREACHABLE', `the service could not be reached (${(error as Error).message})`, 0);
    }
    const length = Number(response.headers.get('content-length') ?? '0');
    const json200 = (response.headers.get('content-type') ?? '').includes('application/json') && length <= MAX_ANSWER_BYTES;
    const body = json200 ? await response.json().catch(() => undefined) as Record<string, unknown> | undefined : undefined;
    if (!json200) await response.body?.cancel().catch(() => undefined);
    const requestId = response.headers.get('x-request-id') ?? undefined;
    if (!response.ok) {
      const error = (body?.error ?? {}) as { code?: unknown; message?: unknown; requestId?: unknown };
      const code = typeof error.code === 'string' ? error.code : 'HTTP_ERROR';
      const message = typeof error.message === 'string' ? error.message : `HTTP ${response.status}`;
      throw new ServiceError(code, `${method} ${path}: ${message}`, response.status,
        typeof error.requestId === 'string' ? error.requestId : requestId);
    }
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      throw new ServiceError('HTTP_ERROR', `${method} ${path}: the answer is not the service's JSON`, response.status, requestId);
    }
    return body;
  };
}
