/**
 * Master routes: upload (a raw `application/vnd.iki.model` body, streamed), the seller's
 * masters, one master (read, rename or archive, delete), its licenses, license creation and identify. HTTP only.
 */
import type { MasterService } from '../services/masters.js';
import { masterView } from '../services/masters.js';
import type { LicenseService } from '../services/licenses.js';
import type { ImageMediaType } from '../services/crypto-port.js';
import { createLicenseBody, renameMasterBody, type CreateLicenseInput, type RenameMasterInput } from '../schemas/requests.js';
import { validate } from '../schemas/validate.js';
import type { BodyLimits } from '../config.js';
import { MASTER_ID_PATTERN } from '../services/ids.js';
import { ApiError } from '../errors.js';
import { actorOf, callerOf, declaredLength, param, rawType, readRaw, requireJson, streamBody, type RouteDef } from './http.js';

/** Media type of a protected model file (`.ikm`). */
export const MODEL_MEDIA_TYPE = 'application/vnd.iki.model';
/** Image types identify accepts. */
export const IMAGE_MEDIA_TYPES: readonly ImageMediaType[] = ['image/png', 'image/jpeg', 'image/webp'];

const MASTER_ID = new RegExp(MASTER_ID_PATTERN);
/** An `Idempotency-Key`: 1 to 255 visible ASCII characters (as Stripe's, whose keys are up to 255). */
export const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

/** The request's `Idempotency-Key`, when it has one; `VALIDATION_FAILED` when it is malformed. */
function idempotencyKey(req: Parameters<RouteDef['handler']>[0]): string | undefined {
  const key = req.get('idempotency-key');
  if (key === undefined) return undefined;
  if (!IDEMPOTENCY_KEY.test(key)) {
    throw new ApiError('VALIDATION_FAILED', 'Idempotency-Key must be 1 to 255 visible ASCII characters',
      { errors: [{ path: 'Idempotency-Key', message: 'must be 1 to 255 visible ASCII characters' }] });
  }
  return key;
}

/** The master routes. */
export function masterRoutes(masters: MasterService, licenses: LicenseService, limits: BodyLimits): RouteDef[] {
  const masterId = (req: Parameters<RouteDef['handler']>[0]) => param(req, 'masterId', MASTER_ID, 'MASTER_NOT_FOUND');
  return [
    {
      method: 'get', path: '/api/licenses/masters', auth: true, scope: 'masters:read',
      async handler(_req, res) {
        res.json({ masters: await masters.list(callerOf(res)) });
      },
    },
    {
      method: 'post', path: '/api/licenses/masters', auth: true,
      async handler(req, res) {
        rawType(req, [MODEL_MEDIA_TYPE]);
        const view = await masters.upload(callerOf(res), streamBody(req, limits.masterBytes), limits.masterBytes,
          declaredLength(req));
        res.status(201).location(`/api/licenses/masters/${view.masterId}`).json(view);
      },
    },
    {
      method: 'get', path: '/api/licenses/masters/{masterId}', auth: true, scope: 'masters:read',
      async handler(req, res) {
        res.json(masterView(await masters.get(callerOf(res), masterId(req))));
      },
    },
    {
      method: 'patch', path: '/api/licenses/masters/{masterId}', auth: true,
      async handler(req, res) {
        const id = masterId(req);
        const change = validate<RenameMasterInput>(renameMasterBody, await requireJson(req, limits.jsonBytes));
        res.json(await masters.update(callerOf(res), id, change));
      },
    },
    {
      method: 'delete', path: '/api/licenses/masters/{masterId}', auth: true,
      async handler(req, res) {
        await masters.remove(callerOf(res), masterId(req));
        res.status(204).end();
      },
    },
    {
      method: 'get', path: '/api/licenses/masters/{masterId}/licenses', auth: true, scope: 'licenses:read',
      async handler(req, res) {
        res.json({ licenses: await licenses.listForMaster(callerOf(res), masterId(req)) });
      },
    },
    {
      method: 'post', path: '/api/licenses/masters/{masterId}/licenses', auth: true, scope: 'licenses:write',
      async handler(req, res) {
        const id = masterId(req);
        const key = idempotencyKey(req);
        const input = validate<CreateLicenseInput>(createLicenseBody, await requireJson(req, limits.jsonBytes));
        const { license, replayed } = await licenses.sales.create(actorOf(res), id, input, key);
        // As Stripe: a replay answers what the first request answered, and says so.
        if (replayed) res.setHeader('Idempotent-Replayed', 'true');
        res.status(201).location(`/api/licenses/${license.licenseId}`).json(license);
      },
    },
    {
      method: 'post', path: '/api/licenses/masters/{masterId}/identify', auth: true,
      async handler(req, res) {
        const id = masterId(req);
        const type = rawType(req, IMAGE_MEDIA_TYPES);
        // The body is read only once the caller may identify (its master, within its rate).
        res.json(await licenses.identify(callerOf(res), id, () => readRaw(req, limits.imageBytes), type));
      },
    },
  ];
}
