/**
 * Activity and flag routes (issue 29 items 1, 3 and 4): a license's timeline (its seller or
 * its buyer), a master's licenses at a glance (its seller), the seller's flags and their
 * dismissal. HTTP only; who may see what is the services' (services/activity.ts, flags.ts).
 */
import { ApiError } from '../errors.js';
import type { ActivityService } from '../services/activity.js';
import type { FlagService } from '../services/flags.js';
import { LICENSE_ID_PATTERN, MASTER_ID_PATTERN } from '../services/ids.js';
import { callerOf, param, type RouteDef } from './http.js';

const LICENSE_ID = new RegExp(LICENSE_ID_PATTERN);
const MASTER_ID = new RegExp(MASTER_ID_PATTERN);
const FLAG_ID = /^fl_[0-9a-f]{24}$/;
const FLAG_STATES = ['open', 'dismissed', 'all'] as const;

/** The activity and flag routes. */
export function activityRoutes(activity: ActivityService, flags: FlagService): RouteDef[] {
  return [
    {
      method: 'get', path: '/api/licenses/{licenseId}/activity', auth: true, scope: 'licenses:read',
      async handler(req, res) {
        res.json(await activity.license(callerOf(res), param(req, 'licenseId', LICENSE_ID, 'LICENSE_NOT_FOUND'), req.query));
      },
    },
    {
      method: 'get', path: '/api/licenses/masters/{masterId}/activity', auth: true, scope: 'masters:read',
      async handler(req, res) {
        res.json(await activity.master(callerOf(res), param(req, 'masterId', MASTER_ID, 'MASTER_NOT_FOUND'), req.query));
      },
    },
    {
      method: 'get', path: '/api/seller/flags', auth: true, scope: 'licenses:read',
      async handler(req, res) {
        const state = req.query['state'] ?? 'open';
        const cursor = req.query['cursor'];
        if (typeof state !== 'string' || !(FLAG_STATES as readonly string[]).includes(state)) {
          throw new ApiError('VALIDATION_FAILED', 'state must be open, dismissed or all', { field: 'state' });
        }
        if (cursor !== undefined && (typeof cursor !== 'string' || !/^[1-9][0-9]{0,17}$/.test(cursor))) {
          throw new ApiError('VALIDATION_FAILED', 'cursor must be a next of an earlier page', { field: 'cursor' });
        }
        res.json(await flags.list(callerOf(res), state as (typeof FLAG_STATES)[number], cursor));
      },
    },
    {
      method: 'post', path: '/api/licenses/{licenseId}/flags/{flagId}/dismiss', auth: true, scope: 'licenses:write',
      async handler(req, res) {
        const licenseId = param(req, 'licenseId', LICENSE_ID, 'LICENSE_NOT_FOUND');
        const flagId = req.params['flagId'];
        if (typeof flagId !== 'string' || !FLAG_ID.test(flagId)) throw new ApiError('FLAG_NOT_FOUND', 'no such flag');
        res.json({ flag: await flags.dismiss(callerOf(res), licenseId, flagId) });
      },
    },
  ];
}
