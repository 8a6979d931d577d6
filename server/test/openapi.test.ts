/**
 * The OpenAPI document covers every mounted route with its bodies, errors, auth and the
 * rate-limit headers; its schemas compile; its error codes are the table's.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { appRoutes } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { ERROR_STATUS } from '../src/errors.js';
import { buildOpenApi, DOCUMENTED_ROUTES } from '../src/openapi.js';
import { silentLogger } from '../src/logger.js';
import { startApp } from './helpers/app.js';

const config = loadConfig({});
const options = { bodyLimits: config.bodyLimits, releaseLimits: config.releaseLimits, signInLimits: config.signInLimits,
  mailLimits: config.mailLimits, quotas: config.quotas, service: 'http://iki.test', logger: silentLogger, now: () => new Date() };
const doc = buildOpenApi(options) as any;

describe('OpenAPI document', () => {
  it('describes exactly the mounted routes', async () => {
    const app = await startApp();
    try {
      const mounted = appRoutes(app.services, options).map((r) => `${r.method.toUpperCase()} ${r.path}`);
      expect([...DOCUMENTED_ROUTES].sort()).toEqual([...mounted].sort());
      const inDoc = Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops as object).map((m) => `${m.toUpperCase()} ${path}`));
      expect(inDoc.sort()).toEqual([...mounted].sort());
    } finally {
      await app.close();
    }
  });

  it('marks every authenticated operation with the bearer scheme and a 401', async () => {
    const app = await startApp();
    try {
      for (const route of appRoutes(app.services, options)) {
        const op = doc.paths[route.path][route.method];
        // Issue 26 item 1: an operation an API key may call names its scope, as the route does.
        expect(op.security, route.path).toEqual(!route.auth ? [] : route.scope === undefined ? [{ bearer: [] }]
          : [{ bearer: [] }, { apiKey: [route.scope] }]);
        if (route.auth) {
          expect(JSON.stringify(op.responses['403']), route.path).toContain(route.scope === undefined ? 'API_KEY_NOT_ALLOWED' : 'INSUFFICIENT_SCOPE');
        }
        if (route.auth) expect(Object.keys(op.responses), route.path).toContain('401');
        expect(Object.keys(op.responses), route.path).toContain('500');
      }
    } finally {
      await app.close();
    }
    expect(doc.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT' });
  });

  it('documents the rate-limit headers, the limits and the versioning rule', () => {
    const key = doc.paths['/api/licenses/{licenseId}/key'].post;
    expect(Object.keys(key.responses['200'].headers)).toEqual(expect.arrayContaining(['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'RateLimit-Policy']));
    expect(Object.keys(key.responses['429'].headers)).toContain('Retry-After');
    expect(doc.info.description).toContain('20 per license and 120 per user');
    expect(doc.info.description).toContain('/api/v2');
    expect(doc.openapi).toBe('3.1.0');
  });

  it('documents the sign-in limit: 429 SIGN_IN_THROTTLED with Retry-After on /api/sessions', () => {
    const session = doc.paths['/api/sessions'].post;
    const refused = session.responses['429'];
    expect(refused.content['application/json'].schema.allOf[1].properties.error.properties.code.enum).toEqual(['SIGN_IN_THROTTLED']);
    expect(Object.keys(refused.headers).sort()).toEqual(['Retry-After', 'X-Request-Id']);
    expect(session.responses['401'].description).toContain('INVALID_CREDENTIALS');
    expect(session.description).toContain('X-Forwarded-For is not trusted');
    expect(doc.info.description).toContain('Sign-in: 10 failures per e-mail address and 50 per client address in any sliding 900-second window');
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const op of Object.values(ops as Record<string, any>)) {
        if (op.responses['429'] !== undefined) expect(Object.keys(op.responses['429'].headers), path).toContain('Retry-After');
      }
    }
  });

  it('documents the resend route and the mail limit: 429 MAIL_THROTTLED with Retry-After on sign-up and resend', () => {
    const resend = doc.paths['/api/accounts/verification'].post;
    expect(resend.security).toEqual([]);
    expect(resend.requestBody.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/ResendVerificationRequest' });
    expect(doc.components.schemas.ResendVerificationRequest).toMatchObject({ required: ['email'], additionalProperties: false });
    expect(resend.responses['202'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/VerificationRequested' });
    expect(doc.components.schemas.VerificationRequested.properties.status).toMatchObject({ const: 'sent-if-unverified' });
    expect(resend.description).toContain('replaces the earlier link');
    for (const path of ['/api/accounts', '/api/accounts/verification']) {
      const refused = doc.paths[path].post.responses['429'];
      expect(refused.content['application/json'].schema.allOf[1].properties.error.properties.code.enum, path).toEqual(['MAIL_THROTTLED']);
      expect(Object.keys(refused.headers).sort(), path).toEqual(['Retry-After', 'X-Request-Id']);
    }
    expect(doc.info.description).toContain('Verification e-mails: 3 resend requests per e-mail address (sign-ups count towards it)'
      + ' and 20 sign-ups and resend requests per client address in any sliding 3600-second window, then 429 MAIL_THROTTLED.');
  });

  it('documents the upload, copy and identify limits with their codes, 413 and 429 answers', () => {
    const codesOf = (path: string, method: string, status: string): string[] =>
      doc.paths[path][method].responses[status].content['application/json'].schema.allOf[1].properties.error.properties.code.enum;
    expect(codesOf('/api/licenses/masters', 'post', '403')).toEqual(expect.arrayContaining(['EMAIL_NOT_VERIFIED', 'SIGNING_KEY_REQUIRED']));
    expect(codesOf('/api/licenses/masters', 'post', '413')).toEqual(expect.arrayContaining(['PAYLOAD_TOO_LARGE', 'STORAGE_QUOTA_EXCEEDED']));
    expect(codesOf('/api/licenses/masters', 'post', '429')).toEqual(['TOO_MANY_UPLOADS']);
    expect(codesOf('/api/licenses/masters', 'post', '422')).toEqual(expect.arrayContaining(['SIGNER_NOT_SELLER', 'MASTER_NAME_TOO_LONG']));
    expect(codesOf('/api/licenses/{licenseId}/model', 'get', '429')).toEqual(['COPY_RATE_LIMITED', 'TOO_MANY_DOWNLOADS']);
    expect(codesOf('/api/licenses/masters/{masterId}/identify', 'post', '429')).toEqual(['IDENTIFY_RATE_LIMITED']);
    expect(codesOf('/api/licenses/masters/{masterId}/identify', 'post', '422')).toContain('IMAGE_TOO_LARGE');
    for (const [path, ops] of Object.entries(doc.paths)) {
      if (!path.includes('{')) continue;
      for (const method of Object.keys(ops as object)) expect(codesOf(path, method, '400'), path).toContain('MALFORMED_REQUEST');
    }
    expect(doc.info.description).toContain('Uploads: 2 running per account (429 TOO_MANY_UPLOADS) and 10737418240 bytes of stored'
      + ' masters per account (413 STORAGE_QUOTA_EXCEEDED). License copies: 10 downloads per license and 50 per licensee in'
      + ' any sliding 86400-second window (429 COPY_RATE_LIMITED), 2 running per license and 4 per licensee (429'
      + ' TOO_MANY_DOWNLOADS). Identify: 60 requests per seller in any sliding 3600-second window (429 IDENTIFY_RATE_LIMITED);'
      + ' images no larger than twice the side and four times the area of the master\'s largest texture, and 67108864 pixels (422 IMAGE_TOO_LARGE).');
  });

  it('uses only codes of the error table and compiles every schema', () => {
    const codes = doc.components.schemas.Error.properties.error.properties.code.enum;
    expect(codes).toEqual(Object.keys(ERROR_STATUS));
    const ajv = new Ajv2020({ strict: false, validateFormats: false });
    ajv.addSchema({ $id: 'doc', components: doc.components });
    for (const name of Object.keys(doc.components.schemas)) {
      expect(ajv.getSchema(`doc#/components/schemas/${name}`), name).toBeTypeOf('function');
    }
    const license = ajv.getSchema('doc#/components/schemas/LicenseList');
    const sample = { licenses: [{ licenseId: '0123456789abcdef', masterId: 'mst_x', masterName: 'Haru',
      seller: { accountId: 'a', name: 'S' }, licensee: { accountId: 'b', name: 'B' }, issuedAt: '2030-01-01T00:00:00Z',
      revokedAt: null, releaseCount: 0, state: 'active', expiresAt: null, suspendedAt: null }] };
    expect(license?.(sample)).toBe(true);
    expect(license?.({ licenses: [{ ...sample.licenses[0], licenseId: 'nope' }] })).toBe(false);
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const op of Object.values(ops as Record<string, any>)) {
        for (const [status, response] of Object.entries(op.responses as Record<string, any>)) {
          if (Number(status) >= 400) expect(response.content['application/json'], `${path} ${status}`).toBeDefined();
        }
      }
    }
  });
});
