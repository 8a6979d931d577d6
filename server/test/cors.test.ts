/**
 * `IKI_CORS_ORIGINS` (issue 25 item 4) over real sockets: with the list empty (the default)
 * a request from another site's page is refused and no response says otherwise; with it set,
 * a listed origin's preflight and bearer-token calls pass, with `Access-Control-Allow-Origin`
 * of that origin only and never `Access-Control-Allow-Credentials`; the cookie routes refuse
 * every other origin; an unlisted origin is refused; every API answer varies by Origin; the
 * service's own pages (same origin) are untouched. The list itself: at and past its limit.
 */
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, ConfigError } from '../src/config.js';
import { MAX_CORS_ORIGINS } from '../src/cors-config.js';
import { newUser, startApp, type TestApp, type User } from './helpers/app.js';

const APP = 'https://app.example';
const OTHER = 'https://evil.example';

/** A raw request with an Origin header (undici's fetch would send none of its own). */
async function from(app: TestApp, origin: string | undefined, method: string, path: string,
  headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${app.url}${path}`, { method, headers: { ...(origin === undefined ? {} : { origin }), ...headers } });
}

const preflight = (method = 'GET', headers = 'authorization') =>
  ({ 'access-control-request-method': method, 'access-control-request-headers': headers });

describe('IKI_CORS_ORIGINS, the list', () => {
  const read = (value: string) => loadConfig({ IKI_CORS_ORIGINS: value }).corsOrigins;

  it('takes origins, trims and de-duplicates them; empty is none', () => {
    expect(read(' https://app.example , http://localhost:5173,https://app.example')).toEqual([APP, 'http://localhost:5173']);
    expect(read('')).toEqual([]);
    expect(loadConfig({}).corsOrigins).toEqual([]);
  });

  it('refuses *, paths, trailing slashes, credentials and other schemes, naming the variable', () => {
    for (const bad of ['*', 'https://app.example/', 'https://app.example/app', 'app.example', 'ftp://app.example',
      'https://user@app.example', 'https://app.example?x=1', 'https://APP.example']) {
      expect(() => read(bad), bad).toThrow(ConfigError);
      expect(() => read(bad), bad).toThrow(/IKI_CORS_ORIGINS must be a comma-separated list of origins/);
    }
  });

  it(`takes ${MAX_CORS_ORIGINS} origins and refuses ${MAX_CORS_ORIGINS + 1}`, () => {
    const list = (n: number) => Array.from({ length: n }, (_, i) => `https://a${i}.example`).join(',');
    expect(read(list(MAX_CORS_ORIGINS))).toHaveLength(MAX_CORS_ORIGINS);
    expect(() => read(list(MAX_CORS_ORIGINS + 1))).toThrow(/at most 64 origins/);
  });
});

describe.each([
  ['off (the default)', [] as string[]],
  ['on', [APP]],
])('cross-origin requests, allowlist %s', (_name, origins) => {
  let app: TestApp;
  let user: User;
  const on = origins.length > 0;

  beforeAll(async () => {
    app = await startApp({ config: { corsOrigins: origins } });
    user = await newUser(app, 'Cora');
  });
  afterAll(async () => app?.close());

  it(on ? 'a listed origin\'s preflight is answered, without credentials' : 'a preflight is refused', async () => {
    const answer = await from(app, APP, 'OPTIONS', '/api/licenses', preflight());
    expect(answer.headers.get('vary')).toMatch(/\bOrigin\b/);
    expect(answer.headers.get('access-control-allow-credentials')).toBeNull();
    if (!on) {
      expect(answer.status).toBe(403);
      expect(answer.headers.get('access-control-allow-origin')).toBeNull();
      expect(((await answer.json()) as any).error.code).toBe('ORIGIN_NOT_ALLOWED');
      return;
    }
    expect(answer.status).toBe(204);
    expect(answer.headers.get('access-control-allow-origin')).toBe(APP);
    expect(answer.headers.get('access-control-allow-methods')).toContain('POST');
    expect(answer.headers.get('access-control-allow-headers')).toContain('authorization');
    // An app's player may send its device id (issue 29).
    expect(answer.headers.get('access-control-allow-headers')).toContain('x-iki-device');
    expect(answer.headers.get('access-control-max-age')).toBe('600');
  });

  it(on ? 'a listed origin calls the API with a bearer token' : 'a bearer-token call from another site is refused', async () => {
    const answer = await from(app, APP, 'GET', '/api/licenses', { authorization: `Bearer ${user.token}` });
    expect(answer.headers.get('vary')).toMatch(/\bOrigin\b/);
    expect(answer.headers.get('access-control-allow-credentials')).toBeNull();
    if (on) {
      expect(answer.status).toBe(200);
      expect(answer.headers.get('access-control-allow-origin')).toBe(APP);
      expect(answer.headers.get('access-control-expose-headers')).toContain('etag');
      expect(await answer.json()).toEqual({ licenses: [] });
    } else {
      expect(answer.status).toBe(403);
      expect(answer.headers.get('access-control-allow-origin')).toBeNull();
    }
  });

  it('an origin not listed is refused, preflight and call alike', async () => {
    for (const [method, headers] of [['OPTIONS', preflight('POST')], ['GET', { authorization: `Bearer ${user.token}` }]] as const) {
      const answer = await from(app, OTHER, method, '/api/licenses', headers);
      expect(answer.status, method).toBe(403);
      expect(answer.headers.get('access-control-allow-origin'), method).toBeNull();
      expect(((await answer.json()) as any).error).toMatchObject({ code: 'ORIGIN_NOT_ALLOWED', requestId: expect.stringMatching(/^req_/) });
    }
  });

  it('the session cookie never works cross-site: the cookie routes refuse every other origin', async () => {
    for (const origin of [APP, OTHER]) {
      for (const path of ['/api/sessions/refresh', '/api/sessions/sign-out']) {
        const answer = await from(app, origin, 'POST', path, { cookie: 'iki_refresh=x; iki_session=1', 'x-iki-session': '1' });
        expect(answer.status, `${origin} ${path}`).toBe(403);
        expect(answer.headers.get('access-control-allow-origin')).toBeNull();
        expect(((await answer.json()) as any).error.code).toBe('ORIGIN_NOT_ALLOWED');
      }
    }
  });

  it('same-origin requests and requests without Origin are untouched, and still vary by Origin', async () => {
    for (const origin of [undefined, 'http://iki.test', app.url]) {
      const answer = await from(app, origin, 'GET', '/api/licenses', { authorization: `Bearer ${user.token}` });
      expect(answer.status, String(origin)).toBe(200);
      expect(answer.headers.get('access-control-allow-origin')).toBeNull();
      expect(answer.headers.get('vary')).toMatch(/\bOrigin\b/);
    }
    // The service reached by a name that is not its public URL (a LAN or DNS name): its own
    // pages send that origin, which is the Host the request was sent to, so it is same-origin.
    const port = new URL(app.url).port;
    const lan = await new Promise<number | undefined>((resolve, reject) => {
      request({ host: '127.0.0.1', port, path: '/api/licenses', headers: { host: `shop-box.lan:${port}`,
        origin: `http://shop-box.lan:${port}`, authorization: `Bearer ${user.token}` } }, (res) => {
        res.resume();
        resolve(res.statusCode);
      }).on('error', reject).end();
    });
    expect(lan).toBe(200);
    // Pages and assets are not the API: no CORS handling there.
    const page = await from(app, OTHER, 'GET', '/player');
    expect(page.headers.get('access-control-allow-origin')).toBeNull();
    expect(page.status).not.toBe(403);
  });
});
