/**
 * Routes of selling from a shop (issue 26): the account's API keys (sessions only: a key never
 * makes or revokes keys), and the seller's license listing, suspension and reinstatement. HTTP
 * only: parse, validate, call the services, shape the answer.
 */
import type { Request } from 'express';
import { ApiError } from '../errors.js';
import { API_KEY_ID_PATTERN, type ApiKeyService } from '../services/api-keys.js';
import { LICENSE_ID_PATTERN, MASTER_ID_PATTERN } from '../services/ids.js';
import type { LicenseSales, SellerLicenseFilter } from '../services/license-sales.js';
import { createApiKeyBody, MAX_EXTERNAL_REF_CHARS, revokeBody, type CreateApiKeyInput, type RevokeInput } from '../schemas/requests.js';
import { validate } from '../schemas/validate.js';
import type { LicenseState } from '../storage/seller-records.js';
import { actorOf, callerOf, param, readJson, requireJson, type RouteDef } from './http.js';

const API_KEY_ID = new RegExp(API_KEY_ID_PATTERN);
const LICENSE_ID = new RegExp(LICENSE_ID_PATTERN);
const MASTER_ID = new RegExp(MASTER_ID_PATTERN);
const STATES: readonly LicenseState[] = ['active', 'suspended', 'expired', 'revoked'];
/** Licenses per page of the seller's listing: the default and the most. */
export const SELLER_PAGE_DEFAULT = 50;
export const SELLER_PAGE_MAX = 200;

/** The page cursor: base64url of "<issued ms>.<license id>" of the last license of a page. */
export const pageCursor = (issuedAt: string, licenseId: string): string =>
  Buffer.from(`${Date.parse(issuedAt)}.${licenseId}`, 'utf8').toString('base64url');

function parseCursor(text: string): { issuedAt: Date; id: string } | undefined {
  const match = /^([0-9]{1,15})\.([0-9a-f]{16})$/.exec(Buffer.from(text, 'base64url').toString('utf8'));
  return match === null ? undefined : { issuedAt: new Date(Number(match[1])), id: match[2] as string };
}

const invalid = (name: string, rule: string): ApiError =>
  new ApiError('VALIDATION_FAILED', `${name} ${rule}`, { errors: [{ path: `?${name}`, message: rule }] });

/** One query parameter given at most once, as a string without control characters. */
function query(req: Request, name: string): string | undefined {
  const value = req.query[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw invalid(name, 'must be given once');
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f-\u009f]/u.test(value)) throw invalid(name, 'must not contain control characters');
  return value;
}

/** The filters of `GET /api/seller/licenses`, each checked. */
export function sellerFilter(req: Request): SellerLicenseFilter {
  const masterId = query(req, 'masterId');
  if (masterId !== undefined && !MASTER_ID.test(masterId)) throw invalid('masterId', 'must be a master id');
  const buyer = query(req, 'buyer');
  if (buyer !== undefined && (buyer.trim() === '' || buyer.length > 254)) throw invalid('buyer', 'must be an account id or e-mail address');
  const state = query(req, 'state');
  if (state !== undefined && !STATES.includes(state as LicenseState)) throw invalid('state', `must be one of ${STATES.join(', ')}`);
  const ref = query(req, 'ref');
  if (ref !== undefined && (ref === '' || ref.length > MAX_EXTERNAL_REF_CHARS)) {
    throw invalid('ref', `must be 1 to ${MAX_EXTERNAL_REF_CHARS} characters`);
  }
  const limitText = query(req, 'limit') ?? String(SELLER_PAGE_DEFAULT);
  const limit = /^[0-9]{1,4}$/.test(limitText) ? Number(limitText) : 0;
  if (limit < 1 || limit > SELLER_PAGE_MAX) throw invalid('limit', `must be 1 to ${SELLER_PAGE_MAX}`);
  const cursor = query(req, 'cursor');
  const after = cursor === undefined ? undefined : parseCursor(cursor);
  if (cursor !== undefined && after === undefined) throw invalid('cursor', 'must be a nextCursor of an earlier page');
  return { masterId, buyer, state: state as LicenseState | undefined, externalRef: ref, limit, after };
}

/** The API-key routes: sessions only (no scope), so a key can never make, list or revoke keys. */
export function apiKeyRoutes(apiKeys: ApiKeyService, jsonLimit: number): RouteDef[] {
  return [
    {
      method: 'get', path: '/api/api-keys', auth: true,
      async handler(_req, res) {
        res.json({ apiKeys: await apiKeys.list(callerOf(res)) });
      },
    },
    {
      method: 'post', path: '/api/api-keys', auth: true,
      async handler(req, res) {
        const input = validate<CreateApiKeyInput>(createApiKeyBody, await requireJson(req, jsonLimit));
        const created = await apiKeys.create(callerOf(res), input.name, input.scopes);
        res.setHeader('Cache-Control', 'no-store');
        res.status(201).json(created);
      },
    },
    {
      method: 'post', path: '/api/api-keys/{apiKeyId}/revoke', auth: true,
      async handler(req, res) {
        const id = req.params['apiKeyId'];
        if (typeof id !== 'string' || !API_KEY_ID.test(id)) throw new ApiError('API_KEY_NOT_FOUND', 'no such API key of yours');
        res.json(await apiKeys.revoke(callerOf(res), id));
      },
    },
  ];
}

/** The seller's license listing and the reversible lifecycle (revoke is in licenses.ts). */
export function sellerRoutes(sales: LicenseSales, jsonLimit: number): RouteDef[] {
  const licenseId = (req: Request) => param(req, 'licenseId', LICENSE_ID, 'LICENSE_NOT_FOUND');
  const change = (suspend: boolean): RouteDef['handler'] => async (req, res) => {
    const id = licenseId(req);
    const sent = await readJson(req, jsonLimit);
    const input = validate<RevokeInput>(revokeBody, sent === undefined ? {} : sent);
    res.json(await sales.setSuspended(actorOf(res), id, suspend, input.reason));
  };
  return [
    {
      method: 'get', path: '/api/seller/licenses', auth: true, scope: 'licenses:read',
      async handler(req, res) {
        const filter = sellerFilter(req);
        const licenses = await sales.list(callerOf(res), filter);
        const last = licenses.at(-1);
        res.json({ licenses, nextCursor: licenses.length === filter.limit && last !== undefined
          ? pageCursor(last.issuedAt, last.licenseId) : null });
      },
    },
    { method: 'post', path: '/api/licenses/{licenseId}/suspend', auth: true, scope: 'licenses:write', handler: change(true) },
    { method: 'post', path: '/api/licenses/{licenseId}/reinstate', auth: true, scope: 'licenses:write', handler: change(false) },
  ];
}
