/**
 * License routes: the buyer's licenses, one license, its history, the streamed license copy,
 * the key release with its rate-limit headers, and revocation. HTTP only.
 *
 * Rate-limit headers follow the IETF draft "RateLimit header fields for HTTP": `RateLimit-Limit`,
 * `RateLimit-Remaining` and `RateLimit-Reset` (seconds) describe whichever of the two limits
 * has fewer releases left; `RateLimit-Policy` lists both. A refusal is 429 with `Retry-After`.
 */
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { ApiError } from '../errors.js';
import type { CopyRange } from '../services/license-copies.js';
import type { LicenseService, ReleaseResult } from '../services/licenses.js';
import type { LimitState, ReleaseOutcome } from '../storage/repository.js';
import { keyReleaseBody, revokeBody, type KeyReleaseInput, type RevokeInput } from '../schemas/requests.js';
import { decodeBase64Url, validate } from '../schemas/validate.js';
import type { BodyLimits, ReleaseLimits } from '../config.js';
import { LICENSE_ID_PATTERN } from '../services/ids.js';
import { actorOf, callerOf, param, readJson, requireJson, sessionOf, type RouteDef } from './http.js';
import { MODEL_MEDIA_TYPE } from './masters.js';

const LICENSE_ID = new RegExp(LICENSE_ID_PATTERN);
const b64 = (bytes: Uint8Array): string => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64url');
const seconds = (at: Date, now: Date): number => Math.max(0, Math.ceil((at.getTime() - now.getTime()) / 1000));

/** `attachment` with an ASCII fallback name and the UTF-8 name (RFC 6266 §4.3, RFC 8187). */
function contentDisposition(fileName: string): string {
  const ascii = fileName.replace(/[^A-Za-z0-9 ._-]/g, '_');
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(fileName)}`;
}

/**
 * One `bytes=` range (RFC 9110 §14.1.2): `first-`, `first-last` or `-suffix`. Anything else
 * (several ranges, other units, bad syntax, last before first) is ignored and the whole copy
 * is sent, as the RFC allows.
 */
export function parseRange(header: string | undefined): CopyRange | undefined {
  const m = header === undefined ? null : /^bytes=\s*([0-9]{0,15})-([0-9]{0,15})\s*$/.exec(header);
  if (m === null) return undefined;
  const [, first = '', last = ''] = m;
  if (first === '' && last === '') return undefined;
  if (first === '') return { suffix: Number(last) };
  const start = Number(first);
  const end = last === '' ? undefined : Number(last);
  if (end !== undefined && end < start) return undefined;
  return { start, end };
}

/** Whether `If-None-Match` matches the strong `etag` (weak comparison, RFC 9110 §13.1.2). */
export function noneMatch(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  if (header.trim() === '*') return true;
  return header.split(',').map((t) => t.trim().replace(/^W\//, '')).includes(etag);
}

/** The RateLimit-* headers for an outcome of the limiter. */
export function rateLimitHeaderList(outcome: Extract<ReleaseOutcome, { kind: 'granted' | 'limited' }>,
  limits: ReleaseLimits, now: Date): [name: string, value: string][] {
  const left = (s: LimitState) => Math.max(0, s.limit - s.used);
  const binding = left(outcome.perLicense) <= left(outcome.perUser) ? outcome.perLicense : outcome.perUser;
  return [
    ['RateLimit-Policy',
      `${limits.perLicense};w=${limits.windowSeconds};comment="per license", ${limits.perUser};w=${limits.windowSeconds};comment="per user"`],
    ['RateLimit-Limit', String(binding.limit)],
    ['RateLimit-Remaining', String(left(binding))],
    ['RateLimit-Reset', String(seconds(binding.resetAt, now))],
  ];
}

/**
 * What a release's result answers: its headers, and either the refusal to throw (after the
 * headers are set) or the body. Shared by the Express route below and routes/release-fast.ts.
 */
export function releaseAnswer(id: string, result: ReleaseResult, limits: ReleaseLimits, at: Date):
{ headers: [string, string][]; error?: ApiError; body: string } {
  const headers = rateLimitHeaderList(result.outcome, limits, at);
  if (result.kind === 'limited') {
    const retryAfter = String(Math.max(1, seconds(result.outcome.retryAt, at)));
    return { headers, body: '', error: new ApiError('RATE_LIMITED', `too many key releases for this ${result.outcome.scope}`,
      { scope: result.outcome.scope, retryAfterSeconds: Number(retryAfter) }, { 'Retry-After': retryAfter }) };
  }
  headers.push(['Cache-Control', 'no-store']);
  return { headers, body: JSON.stringify({
    licenseId: id, algorithm: 'X25519-HKDF-SHA256-XChaCha20Poly1305',
    ephemeralPublicKey: b64(result.sealed.ephemeralPublicKey), nonce: b64(result.sealed.nonce),
    sealedKey: b64(result.sealed.ciphertext), releaseCount: result.outcome.releaseCount,
  }) };
}

/** The license routes. */
export function licenseRoutes(licenses: LicenseService, body: BodyLimits, limits: ReleaseLimits,
  now: () => Date): RouteDef[] {
  const licenseId = (req: Parameters<RouteDef['handler']>[0]) => param(req, 'licenseId', LICENSE_ID, 'LICENSE_NOT_FOUND');
  return [
    {
      method: 'get', path: '/api/licenses', auth: true,
      async handler(_req, res) {
        res.json({ licenses: await licenses.listForLicensee(callerOf(res)) });
      },
    },
    {
      method: 'get', path: '/api/licenses/{licenseId}', auth: true, scope: 'licenses:read',
      async handler(req, res) {
        res.json(await licenses.get(callerOf(res), licenseId(req)));
      },
    },
    {
      method: 'get', path: '/api/licenses/{licenseId}/events', auth: true, scope: 'licenses:read',
      async handler(req, res) {
        const limit = Number(req.query['limit'] ?? 100);
        const before = req.query['before'];
        if (!Number.isInteger(limit) || limit < 1 || limit > 1000
          || (before !== undefined && (typeof before !== 'string' || !/^[1-9][0-9]{0,17}$/.test(before)))) {
          throw new ApiError('VALIDATION_FAILED', 'limit must be 1 to 1000 and before an event id');
        }
        const events = await licenses.events(callerOf(res), licenseId(req), { limit, before });
        res.json({ events, nextBefore: events.length === limit ? events.at(-1)?.eventId ?? null : null });
      },
    },
    {
      method: 'get', path: '/api/licenses/{licenseId}/model', auth: true,
      async handler(req, res) {
        const caller = callerOf(res);
        const id = licenseId(req);
        const info = await licenses.copyInfo(caller, id);
        // Every download of a license is byte-identical: the ETag is strong, a cached copy is
        // revalidated (revocation still applies), and any range can be asked for.
        const describe = () => {
          res.setHeader('ETag', info.etag);
          res.setHeader('Accept-Ranges', 'bytes');
          res.setHeader('Cache-Control', 'private, no-cache');
        };
        if (noneMatch(req.get('if-none-match'), info.etag)) {
          describe();
          res.status(304).end();
          return;
        }
        const body = () => {
          describe();
          res.setHeader('Content-Type', MODEL_MEDIA_TYPE);
          res.setHeader('Content-Disposition', contentDisposition(info.fileName));
        };
        if (req.method === 'HEAD') {
          body();
          if (info.size !== undefined) res.setHeader('Content-Length', String(info.size));
          res.status(200).end();
          return;
        }
        const ifRange = req.get('if-range');
        const range = ifRange === undefined || ifRange.trim() === info.etag ? parseRange(req.get('range')) : undefined;
        const copy = await licenses.openCopy(caller, id, range, { ip: req.ip, device: req.get('x-iki-device') });
        try {
          body();
          if (copy.range !== undefined) {
            res.status(206);
            res.setHeader('Content-Range', `bytes ${copy.range.start}-${copy.range.end}/${copy.size ?? '*'}`);
            res.setHeader('Content-Length', String(copy.range.end - copy.range.start + 1));
          } else if (copy.size !== undefined) {
            res.setHeader('Content-Length', String(copy.size));
          }
          // pipeline applies back-pressure and, if the client goes away, stops the source.
          await pipeline(Readable.from(copy.chunks, { objectMode: false }), res);
        } finally {
          // Frees the download's slot however the transfer ended.
          await copy.close();
        }
      },
    },
    {
      // The session and the verified address are checked by the release statement itself.
      method: 'post', path: '/api/licenses/{licenseId}/key', auth: true, sessionCheckedByHandler: true,
      async handler(req, res) {
        const id = licenseId(req);
        const input = validate<KeyReleaseInput>(keyReleaseBody, await requireJson(req, body.jsonBytes));
        const publicKey = decodeBase64Url(input.publicKey, 'publicKey', 32);
        const result = await licenses.releaseKey(callerOf(res), id, publicKey, sessionOf(res),
          { ip: req.ip, device: req.get('x-iki-device') });
        const answer = releaseAnswer(id, result, limits, now());
        for (const [name, value] of answer.headers) res.setHeader(name, value);
        if (answer.error !== undefined) throw answer.error;
        res.type('json').send(answer.body);
      },
    },
    {
      method: 'post', path: '/api/licenses/{licenseId}/revoke', auth: true, scope: 'licenses:write',
      async handler(req, res) {
        const id = licenseId(req);
        // Only an absent body means "no reason": a JSON `null` is a body, and not an object.
        const sent = await readJson(req, body.jsonBytes);
        const input = validate<RevokeInput>(revokeBody, sent === undefined ? {} : sent);
        res.json(await licenses.sales.revoke(actorOf(res), id, input.reason));
      },
    },
  ];
}
