/**
 * The OpenAPI operations and schemas of activity and flags (issue 29; docs/activity.md);
 * `openapi.ts` merges them into the document.
 */
import type { ErrorCode } from './errors.js';
import type { Op } from './openapi.js';
import { MAX_MASTER_LICENSES, MAX_RANGE_DAYS } from './services/activity.js';
import { FLAGS_PAGE } from './services/flags.js';
import { FLAG_RULES } from './storage/flags-records.js';
import { REFUSAL_REASONS } from './storage/activity-records.js';

const AUTH: ErrorCode[] = ['UNAUTHENTICATED', 'EMAIL_NOT_VERIFIED'];
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const time = { type: 'string', format: 'date-time' } as const;
const count = { type: 'integer', minimum: 0 } as const;

/** `from`, `to`, `bucket` and `tz` of both activity reads. */
const RANGE: NonNullable<Op['extra']> = {
  parameters: [
    { name: 'from', in: 'query', required: false, schema: { type: 'string', format: 'date-time' },
      description: 'Start (ISO 8601 with an offset or Z), moved back to the start of its bucket. Default: 2 days (hour) or'
        + ' 30 days (day) before `to`.' },
    { name: 'to', in: 'query', required: false, schema: { type: 'string', format: 'date-time' },
      description: 'End (exclusive), moved forward to the next bucket start unless it is one. Default: now.' },
    { name: 'bucket', in: 'query', required: false, schema: { enum: ['hour', 'day'], default: 'day' },
      description: `Hours or days of \`tz\`. A range is at most ${MAX_RANGE_DAYS.hour} days by the hour and`
        + ` ${MAX_RANGE_DAYS.day} by the day.` },
    { name: 'tz', in: 'query', required: false, schema: { type: 'string', maxLength: 64, default: 'UTC' },
      description: 'IANA time zone name (Asia/Tokyo, America/St_Johns, ...); buckets are its local hours or days, daylight'
        + ' saving included (a day of 23 or 25 hours), and every time in the answer carries its offset.' },
  ],
  responses: {},
  okHeaders: {},
};

const NOTE = ' Counted per license and quarter hour when they happen (exact in any zone: every offset is a multiple'
  + ' of 15 minutes): granted key releases, copy downloads (a resumed download as resumes), refusals by reason'
  + ' (rate_limited: a release or download limit; revoked; suspended; expired; not_licensee: another account asked for'
  + ' the key, or the seller for the copy), distinct client address prefixes (/24 IPv4, /48 IPv6, kept only as a keyed'
  + ' hash, never the address) and distinct player devices (the X-Iki-Device header the player sends: 22 base64url'
  + ' characters, a random id it keeps per license; anything else is ignored). Kept as long as the history'
  + ' (IKI_RETENTION_DAYS).';

/** The activity and flag operations. */
export const ACTIVITY_OPS: Op[] = [
  { method: 'get', path: '/api/licenses/masters/{masterId}/activity', auth: true, scope: 'masters:read', tag: 'activity',
    summary: 'A master\'s licenses at a glance: releases per bucket, busiest first',
    ok: { status: 200, schema: 'MasterActivity', description: `At most ${MAX_MASTER_LICENSES} licenses (truncated says when`
      + ' there were more), by releases in the range, most first.' },
    errors: ['MALFORMED_REQUEST', ...AUTH, 'VALIDATION_FAILED', 'MASTER_NOT_FOUND'], extra: RANGE,
    description: `For the master's seller.${NOTE}` },
  { method: 'get', path: '/api/licenses/{licenseId}/activity', auth: true, scope: 'licenses:read', tag: 'activity',
    summary: 'A license\'s timeline: releases, downloads, refusals, addresses, devices per bucket, and its flags',
    ok: { status: 200, schema: 'LicenseActivity', description: 'One entry per bucket of the range, in order.' },
    errors: ['MALFORMED_REQUEST', ...AUTH, 'VALIDATION_FAILED', 'LICENSE_NOT_FOUND'], extra: RANGE,
    description: `For the license's seller and its buyer (who sees what the seller sees of it).${NOTE}` },
  { method: 'get', path: '/api/seller/flags', auth: true, scope: 'licenses:read', tag: 'activity',
    summary: 'The flags on the seller\'s licenses, newest first',
    ok: { status: 200, schema: 'FlagPage', description: `At most ${FLAGS_PAGE} per page.` },
    errors: [...AUTH, 'VALIDATION_FAILED'],
    extra: { parameters: [
      { name: 'state', in: 'query', required: false, schema: { enum: ['open', 'dismissed', 'all'], default: 'open' } },
      { name: 'cursor', in: 'query', required: false, schema: { type: 'string', pattern: '^[1-9][0-9]{0,17}$' },
        description: 'The `next` of the previous page.' },
    ], responses: {}, okHeaders: {} },
    description: 'A flag says that in one window (IKI_FLAG_WINDOW_HOURS, 24 by default, aligned to UTC) a license was refused'
      + ' by a rate limit at least IKI_FLAG_RATE_LIMIT_HITS times (rate_limit), was released to more than'
      + ' IKI_FLAG_MAX_ADDRESSES address prefixes (addresses) or IKI_FLAG_MAX_DEVICES devices (devices), or had at least'
      + ' IKI_FLAG_SCRIPTED_MIN_RELEASES releases whose gaps vary by a coefficient of variation below'
      + ' IKI_FLAG_SCRIPTED_MAX_CV (scripted). value is what was measured, threshold what it was held against. Each is'
      + ' raised once per license, rule and window (by a sweep every IKI_FLAG_SWEEP_SECONDS) with a license.flagged webhook'
      + ' event.' },
  { method: 'post', path: '/api/licenses/{licenseId}/flags/{flagId}/dismiss', auth: true, scope: 'licenses:write',
    tag: 'activity', summary: 'Dismiss a flag (idempotent)',
    ok: { status: 200, schema: 'DismissedFlag', description: 'The flag, dismissed (the first dismissal time stays).' },
    errors: ['MALFORMED_REQUEST', ...AUTH, 'LICENSE_NOT_FOUND', 'FLAG_NOT_FOUND'],
    description: 'For the license\'s seller; anyone else gets FLAG_NOT_FOUND.' },
];

/** Path parameters of these operations. */
export const ACTIVITY_PATH_PARAMS: Record<string, { pattern: string; description: string }> = {
  flagId: { pattern: '^fl_[0-9a-f]{24}$', description: 'Flag id.' },
};

const flag = {
  type: 'object', required: ['id', 'licenseId', 'masterId', 'rule', 'raisedAt', 'windowStart', 'windowEnd', 'value', 'threshold',
    'state', 'dismissedAt'],
  properties: {
    id: { type: 'string', pattern: '^fl_[0-9a-f]{24}$' }, licenseId: { type: 'string' }, masterId: { type: 'string' },
    rule: { enum: [...FLAG_RULES] }, raisedAt: time, windowStart: time, windowEnd: time,
    value: { type: 'number', description: 'What was measured: refusals, prefixes, devices, or the coefficient of variation.' },
    threshold: { type: 'number' }, state: { enum: ['open', 'dismissed'] },
    dismissedAt: { type: ['string', 'null'], format: 'date-time' },
  },
};

const zoned = { type: 'string', description: 'ISO 8601 with the offset of `tz` at that instant, e.g. 2026-11-01T00:00:00+09:00.' };

/** Response schemas of these operations. */
export const ACTIVITY_SCHEMAS: Record<string, unknown> = {
  Flag: flag,
  FlagPage: { type: 'object', required: ['flags', 'next'], properties: { flags: { type: 'array', items: ref('Flag') },
    next: { type: ['string', 'null'], description: 'Pass as cursor for the next page; null on the last page.' } } },
  DismissedFlag: { type: 'object', required: ['flag'], properties: { flag: ref('Flag') } },
  MasterActivity: { type: 'object', required: ['masterId', 'from', 'to', 'bucket', 'timeZone', 'buckets', 'licenses', 'truncated'],
    properties: {
      masterId: { type: 'string' }, from: zoned, to: zoned, bucket: { enum: ['hour', 'day'] }, timeZone: { type: 'string' },
      buckets: { type: 'array', items: zoned, description: 'The start of every bucket, in order.' },
      licenses: { type: 'array', items: { type: 'object',
        required: ['licenseId', 'label', 'state', 'totals', 'releases', 'openFlags'], properties: {
          licenseId: { type: 'string' },
          label: { type: ['string', 'null'], description: 'The buyer\'s e-mail address where the seller licensed by it; else null.' },
          state: { enum: ['active', 'suspended', 'revoked', 'expired'] },
          totals: { type: 'object', required: ['releases', 'downloads', 'resumes', 'refusals', 'addresses', 'devices'], properties: {
            releases: count, downloads: count, resumes: count, refusals: count,
            addresses: { ...count, description: 'Distinct address prefixes over the whole range.' },
            devices: { ...count, description: 'Distinct devices over the whole range.' } } },
          releases: { type: 'array', items: count, description: 'Releases per bucket (as `buckets`).' },
          openFlags: count,
        } } },
      truncated: { type: 'boolean' },
    } },
  LicenseActivity: { type: 'object',
    required: ['licenseId', 'masterId', 'from', 'to', 'bucket', 'timeZone', 'limits', 'series', 'flags'], properties: {
      licenseId: { type: 'string' }, masterId: { type: 'string' }, from: zoned, to: zoned, bucket: { enum: ['hour', 'day'] },
      timeZone: { type: 'string' },
      limits: { type: 'object', required: ['perLicense', 'perAccount'], description: 'The key-release limits, to draw in.',
        properties: Object.fromEntries(['perLicense', 'perAccount'].map((k) => [k, { type: 'object',
          required: ['count', 'windowSeconds'], properties: { count, windowSeconds: count } }])) },
      series: { type: 'array', items: { type: 'object',
        required: ['start', 'releases', 'downloads', 'resumes', 'refusals', 'addresses', 'devices'], properties: {
          start: zoned, releases: count, downloads: count, resumes: count,
          refusals: { type: 'object', required: [...REFUSAL_REASONS],
            properties: Object.fromEntries(REFUSAL_REASONS.map((r) => [r, count])) },
          addresses: { ...count, description: 'Distinct address prefixes in the bucket.' },
          devices: { ...count, description: 'Distinct devices in the bucket.' },
        } } },
      flags: { type: 'array', items: ref('Flag'), description: 'The license\'s newest 100 flags, open and dismissed.' },
    } },
};
