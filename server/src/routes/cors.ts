/**
 * Cross-origin requests (issue 25 item 4; Fetch standard "CORS protocol"). Same-origin is the
 * default: with `IKI_CORS_ORIGINS` empty, no response carries an `Access-Control-*` header and
 * any request whose `Origin` is another site is refused. Origins on the list may call the API
 * (`/api/…`) and download the library (`/downloads/…`) with a bearer token:
 *
 * - preflights (`OPTIONS` with `Access-Control-Request-Method`) answer 204 with the methods and
 *   headers the API takes, cached for 10 minutes; an origin not listed gets 403
 *   `ORIGIN_NOT_ALLOWED` and no `Access-Control-Allow-Origin`, so the browser stops there;
 * - never cookies: no `Access-Control-Allow-Credentials`, a cross-origin request's `Cookie`
 *   header is dropped before any route sees it, and the two routes that work by the session
 *   cookie (`/api/sessions/refresh`, `/api/sessions/sign-out`) refuse every other origin;
 * - `Vary: Origin` on every `/api` and `/downloads` response, so no shared cache hands one
 *   origin's answer to another.
 *
 * Same-origin is the service's own origin (`IKI_PUBLIC_URL`) or the one the request was sent
 * to (Host, and the protocol as `trust proxy` decides), which the pages' own POSTs carry.
 */
import type { Request, RequestHandler } from 'express';
import { ApiError } from '../errors.js';
import { hostOrigin } from './http.js';

/** What the API takes (OpenAPI document). */
const ALLOW_METHODS = 'GET, HEAD, POST, PUT, PATCH, DELETE';
// `x-iki-device`: the player's device id for a license (issue 29), which an app's player sends too.
const ALLOW_HEADERS = 'authorization, content-type, range, if-range, if-none-match, x-iki-device';
/** What an app may read: copy resumption, downloads, rate limits, request ids. */
const EXPOSE_HEADERS = 'content-disposition, content-length, content-range, accept-ranges, etag, location, retry-after, '
  + 'x-request-id, x-iki-cli-version, x-iki-core-version';
const MAX_AGE_SECONDS = 600;
/** Routes that work by the session cookie: this site's own pages only. */
const COOKIE_ROUTES = new Set(['/api/sessions/refresh', '/api/sessions/sign-out']);

const covered = (path: string): boolean => path.startsWith('/api/') || path.startsWith('/downloads/');

function sameOrigin(req: Request, origin: string, own: string): boolean {
  return origin === own || origin === hostOrigin(req);
}

/** The middleware; `service` is the public URL, `allowed` the canonical origins of IKI_CORS_ORIGINS. */
export function corsHandler(service: string, allowed: readonly string[]): RequestHandler {
  const own = new URL(service).origin;
  const listed = new Set(allowed);
  return (req, res, next) => {
    if (!covered(req.path)) {
      next();
      return;
    }
    res.vary('Origin');
    const origin = req.get('origin');
    if (origin === undefined || sameOrigin(req, origin, own)) {
      next();
      return;
    }
    if (!listed.has(origin)) {
      throw new ApiError('ORIGIN_NOT_ALLOWED', 'requests from this origin are not allowed (IKI_CORS_ORIGINS)');
    }
    delete req.headers.cookie;
    if (COOKIE_ROUTES.has(req.path)) {
      throw new ApiError('ORIGIN_NOT_ALLOWED', 'the session cookie is for this service\'s own pages; other sites use bearer tokens');
    }
    res.setHeader('Access-Control-Allow-Origin', origin);
    if (req.method === 'OPTIONS' && req.get('access-control-request-method') !== undefined) {
      res.setHeader('Access-Control-Allow-Methods', ALLOW_METHODS);
      res.setHeader('Access-Control-Allow-Headers', ALLOW_HEADERS);
      res.setHeader('Access-Control-Max-Age', String(MAX_AGE_SECONDS));
      res.status(204).end();
      return;
    }
    res.setHeader('Access-Control-Expose-Headers', EXPOSE_HEADERS);
    next();
  };
}
