/**
 * The licensing service's HTTP API for browser code: pages, Web Workers and an editor app.
 * One `fetch` wrapper sends the access token, reads the API's error body (`{error: {code,
 * message, details?, requestId}}`, STYLE.md "One error model") into an {@link ApiProblem},
 * and touches neither the DOM nor any storage, so it runs in a page and in a worker alike.
 * The token comes from a function the caller supplies (`session.ts` for the pages, a value
 * handed over by the page inside a worker).
 */

/** The fields of an {@link ApiProblem}; also its form on the wire between page and worker. */
export interface ApiProblemFields {
  /** HTTP status; 0 when the service could not be reached. */
  status: number;
  /** The API's code (`LICENSE_REVOKED`, ...), `NETWORK` or `HTTP_ERROR`. */
  code: string;
  message: string;
  requestId: string | null;
  details: Record<string, unknown> | null;
  /** From `Retry-After` or `details.retryAfterSeconds`, when positive. */
  retryAfterSeconds: number | null;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** An error answer of the API, or a network failure (status 0, code `NETWORK`). */
export class ApiProblem extends Error {
  readonly status: number;
  readonly code: string;
  readonly requestId: string | null;
  readonly details: Record<string, unknown> | null;
  readonly retryAfterSeconds: number | null;

  constructor(fields: ApiProblemFields) {
    super(fields.message);
    this.name = 'ApiProblem';
    this.status = fields.status;
    this.code = fields.code;
    this.requestId = fields.requestId;
    this.details = fields.details;
    this.retryAfterSeconds = fields.retryAfterSeconds;
  }

  /** The problem an answer describes: its JSON error body (if any) and headers. */
  static fromAnswer(status: number, body: unknown, headers?: Headers | null): ApiProblem {
    const error = isRecord(body) && isRecord(body['error']) ? body['error'] : {};
    const details = isRecord(error['details']) ? error['details'] : null;
    const retry = Number(headers?.get('retry-after') ?? details?.['retryAfterSeconds']);
    const requestId = typeof error['requestId'] === 'string' ? error['requestId'] : headers?.get('x-request-id') ?? null;
    return new ApiProblem({
      status,
      code: typeof error['code'] === 'string' ? error['code'] : status === 0 ? 'NETWORK' : 'HTTP_ERROR',
      message: typeof error['message'] === 'string' ? error['message'] : `HTTP ${status}`,
      requestId,
      details,
      retryAfterSeconds: Number.isFinite(retry) && retry > 0 ? retry : null,
    });
  }

  /** The service could not be reached (or the connection broke). */
  static network(message = 'the service could not be reached'): ApiProblem {
    return ApiProblem.fromAnswer(0, { error: { message } });
  }

  /** Plain fields, for crossing to or from a worker. */
  toJSON(): ApiProblemFields {
    return { status: this.status, code: this.code, message: this.message, requestId: this.requestId,
      details: this.details, retryAfterSeconds: this.retryAfterSeconds };
  }
}

/** Reads a non-2xx answer into an {@link ApiProblem} (its JSON body when it has one). */
export async function problemFrom(response: Response): Promise<ApiProblem> {
  let body: unknown = null;
  try {
    if ((response.headers.get('content-type') ?? '').includes('application/json')) body = await response.json();
  } catch {
    body = null;
  }
  return ApiProblem.fromAnswer(response.status, body, response.headers);
}

/** Options of an {@link ApiClient}. */
export interface ApiClientOptions {
  /** Where the API lives: `''` (the page's own origin) by default, else an origin such as `https://iki.example`. */
  baseUrl?: string;
  /** The access token for the next call, or null when signed out. */
  token?: () => string | null;
  /**
   * Called on a 401 answer: a new access token (resolves true) makes the client retry the
   * request once with it; a request whose body is a stream is not retried.
   */
  refresh?: () => Promise<boolean>;
  /** Called on a 401 answer the refresh did not cure (the session ended), before the call rejects. */
  onUnauthorized?: () => void;
  /**
   * Cookies: `'omit'` by default, because the token travels in `Authorization` and no cookie
   * may authorise a request a third-party page can forge.
   */
  credentials?: RequestCredentials;
}

/** One call: `json` is sent as `application/json`, `body` as it is with `type`. */
export interface ApiCall {
  method?: string;
  json?: unknown;
  body?: BodyInit;
  type?: string;
  /** Extra request headers (e.g. the player's `X-Iki-Device`). */
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

/** The service's API: JSON calls and raw downloads, with the token of {@link ApiClientOptions}. */
export class ApiClient {
  readonly #options: ApiClientOptions;

  constructor(options: ApiClientOptions = {}) {
    this.#options = options;
  }

  /** `Authorization` for the current token, or nothing. */
  authHeaders(): Record<string, string> {
    const token = this.#options.token?.() ?? null;
    return token === null ? {} : { authorization: `Bearer ${token}` };
  }

  /**
   * A call that answers JSON: resolves to the parsed body (`null` for 204), rejects with an
   * {@link ApiProblem}, or with the signal's `AbortError`.
   */
  async call<T = unknown>(path: string, call: ApiCall = {}): Promise<T> {
    const headers: Record<string, string> = { ...call.headers, accept: 'application/json', ...this.authHeaders() };
    let body = call.body;
    if (call.json !== undefined) {
      body = JSON.stringify(call.json);
      headers['content-type'] = 'application/json';
    } else if (call.type !== undefined) {
      headers['content-type'] = call.type;
    }
    const response = await this.fetch(path, { method: call.method ?? 'GET', headers, body, signal: call.signal });
    return (response.status === 204 ? null : await response.json()) as T;
  }

  /**
   * A request whose answer the caller reads itself (a streamed download): resolves to the
   * 2xx response, never cached by the browser (`no-store`); rejects like {@link call}.
   */
  async fetch(path: string, init: RequestInit = {}): Promise<Response> {
    let response = await this.#send(path, init);
    const replayable = !(typeof ReadableStream !== 'undefined' && init.body instanceof ReadableStream);
    if (response.status === 401 && replayable && this.#options.refresh !== undefined && (await this.#options.refresh())) {
      response = await this.#send(path, init);
    }
    if (response.ok) return response;
    const problem = await problemFrom(response);
    if (problem.status === 401) this.#options.onUnauthorized?.();
    throw problem;
  }

  async #send(path: string, init: RequestInit): Promise<Response> {
    const headers = new Headers(init.headers);
    for (const [name, value] of Object.entries(this.authHeaders())) {
      if (!headers.has(name)) headers.set(name, value);
    }
    try {
      return await fetch(`${this.#options.baseUrl ?? ''}${path}`, {
        ...init, headers, cache: 'no-store', credentials: this.#options.credentials ?? 'omit',
      });
    } catch (err) {
      if (init.signal?.aborted === true) throw init.signal.reason ?? err;
      throw ApiProblem.network();
    }
  }
}
