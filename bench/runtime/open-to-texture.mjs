// @ts-check
/**
 * make bench-runtime (not part of make test; issue 25): on the buyer's `/player` page in
 * headless Chromium, the time from clicking "Open" to the first texture drawn on a canvas,
 * two ways:
 *
 * - direct: the built-in runtime's first texture canvas, drawn from the package resolver's
 *   `ImageBitmap` (pixels in memory, no URL);
 * - url: as soon as the model's package URL is on the page, `new Image()` with the texture's
 *   URL (the service worker asks the page, the page hands the pixels to the license worker,
 *   whose WASM encodes the PNG and answers the service worker, the browser decodes it), then
 *   `drawImage` onto a canvas. The built-in runtime runs at the same time, so this is slightly
 *   pessimistic for the URL path.
 *
 * Both include the download, the key release and the decryption, which dominate. Runs
 * alternate; the service is the built one (server/dist), on embedded PGlite in a temp dir.
 * Besides median and p95 it prints where the URL path's time goes (medians, ms from the
 * click): the model URL on the page, the service worker's fetch event, the answer (its
 * `Server-Timing`), the response's end, the decoded image; and for direct, the model URL.
 */
const USAGE = `usage: node bench/runtime/open-to-texture.mjs [--runs N] [--atlas PX]

  --runs N    measured opens of each way (default 8; two warm-up opens come first)
  --atlas PX  crop the fixtures' CC0 atlas (tests/fixtures/packages.mjs) to PX x PX;
              at most that image's size, 1024 (default 1024)
  BENCH_VERBOSE=1 prints every open with its stages.`;
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { extname, join } from 'node:path';
import { chromium } from 'playwright-core';
import * as iki from '../../ts/dist/index.js';
import { serve } from '../../server/dist/main.js';
import { decodePng } from '../../tests/fixtures/png.mjs';
import { writeModelPackage } from '../../tests/fixtures/packages.mjs';

/** `--name N` as a whole number in [min, max], else `fallback`; anything else prints the usage. */
function args() {
  const argv = process.argv.slice(2);
  const out = { runs: 8, atlas: 1024 };
  const bounds = { runs: [1, 1000], atlas: [1, 1024] };
  for (let i = 0; i < argv.length; i += 2) {
    const name = argv[i]?.replace(/^--/, '') ?? '';
    if (argv[i] === '--help' || argv[i] === '-h') {
      console.log(USAGE);
      process.exit(0);
    }
    const value = Number(argv[i + 1]);
    const range = Object.hasOwn(bounds, name) ? bounds[/** @type {'runs' | 'atlas'} */ (name)] : undefined;
    if (!argv[i]?.startsWith('--') || range === undefined || !Number.isInteger(value) || value < range[0] || value > range[1]) {
      console.error(`open-to-texture: bad argument ${JSON.stringify(argv.slice(i, i + 2).join(' '))}\n${USAGE}`);
      process.exit(2);
    }
    out[/** @type {'runs' | 'atlas'} */ (name)] = value;
  }
  return out;
}
const { runs: RUNS, atlas: ATLAS } = args();
const PASSWORD = 'correct horse battery';

const dir = await mkdtemp(join(tmpdir(), 'iki-bench-runtime-'));
/** @type {{ fields: Record<string, unknown> }[]} */
const logs = [];
const push = (message, fields = {}) => { logs.push({ fields }); };
// Copy downloads are limited per license and buyer (10 and 50 an hour by default): raised here.
const server = await serve({ port: 0, dataDir: join(dir, 'data'), env: { IKI_COPIES_PER_LICENSE: '100000', IKI_COPIES_PER_USER: '100000' }, logger: { info: push, warn: push, error: push },
  config: { passwordHashing: { memoryKiB: 256, iterations: 1, parallelism: 1 },
    releaseLimits: { perLicense: 1000, perUser: 1000, windowSeconds: 3600 } } });
const url = server.url;

async function call(method, path, json, token) {
  const headers = { ...(json === undefined ? {} : { 'content-type': 'application/json' }), ...(token === undefined ? {} : { authorization: `Bearer ${token}` }) };
  const r = await fetch(`${url}${path}`, { method, headers, body: json === undefined ? undefined : JSON.stringify(json) });
  const body = await r.json();
  if (!r.ok) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(body)}`);
  return body;
}

async function account(name) {
  const email = `${name}-${Date.now()}@example.com`;
  await call('POST', '/api/accounts', { email, password: PASSWORD, name });
  const link = logs.filter((l) => l.fields['to'] === email).at(-1)?.fields['link'];
  await call('POST', '/api/accounts/verify', { token: new URL(String(link)).searchParams.get('token'), password: PASSWORD });
  const session = await call('POST', '/api/sessions', { email, password: PASSWORD });
  return { email, accountId: session.accountId, token: session.accessToken };
}

async function master(seller) {
  await iki.loadWasm();
  const { generateKeyPairSync, sign } = await import('node:crypto');
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const raw = publicKey.export({ format: 'der', type: 'spki' }).subarray(12);
  const proof = sign(null, Buffer.concat([Buffer.from('IKI-KEY-REGISTRATION-V1\0'), Buffer.from(seller.accountId)]), privateKey);
  await call('POST', '/api/keys/signing', { publicKey: raw.toString('base64url'), proof: proof.toString('base64url'), name: 'bench' }, seller.token);
  const seed = new Uint8Array(privateKey.export({ format: 'der', type: 'pkcs8' }).subarray(-32));
  const model = await writeModelPackage(join(dir, 'model'), { name: 'Aster', atlasSize: ATLAS });
  const sha256 = (b) => createHash('sha256').update(b).digest('hex');
  const entries = await Promise.all(model.files.map(async (path) => {
    const bytes = new Uint8Array(await readFile(join(model.dir, path)));
    if (model.textures.includes(path)) {
      const { width, height, rgba } = decodePng(bytes);
      return { path, type: 'image/x-rgba8', encoding: 'rgba8', data: rgba, size: rgba.length, sha256: sha256(rgba),
        meta: { kind: 'texture', width, height, source: 'image/png' } };
    }
    return { path, type: extname(path) === '.json' ? 'application/json' : 'application/octet-stream', encoding: 'deflate',
      data: bytes, size: bytes.length, sha256: sha256(bytes) };
  }));
  const keys = await call('GET', '/api/keys/service');
  const signingKey = iki.SigningKey.fromSeed(seed);
  const parts = [];
  for await (const part of iki.writeContainer(/** @type {any} */ (entries), { kind: 'model', signingKey, signer: { kind: 'device', name: 'bench' },
    meta: { format: 'iki-model', version: 1, name: 'Aster', role: 'master' },
    protection: { recipients: [iki.fromBase64Url(keys.x25519PublicKey, 32)] } })) parts.push(part);
  signingKey.free();
  const r = await fetch(`${url}/api/licenses/masters`, { method: 'POST', body: Buffer.concat(parts),
    headers: { authorization: `Bearer ${seller.token}`, 'content-type': 'application/vnd.iki.model' } });
  if (r.status !== 201) throw new Error(`upload: ${r.status}`);
  return { masterId: (await r.json()).masterId, texture: model.textures[0] };
}

const seller = await account('seller');
const buyer = await account('buyer');
const { masterId, texture } = await master(seller);
const { licenseId } = await call('POST', `/api/licenses/masters/${masterId}/licenses`, { email: buyer.email }, seller.token);
const OPENS = RUNS * 2 + 2;

const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--headless', '--no-sandbox', '--disable-gpu'] });
const page = await (await browser.newContext()).newPage();
await page.goto(`${url}/?next=%2Fplayer`);
await page.fill('#signin-email', buyer.email);
await page.fill('#signin-password', PASSWORD);
await Promise.all([page.waitForURL(`${url}/player`), page.click('#signin button[type=submit]')]);
await page.waitForSelector('#license-list');

/** One open of `licenseId`; resolves to ms from the click to the first texture drawn, by `way`. */
async function once(way, licenseId) {
  return page.evaluate(async ({ way, id, texture }) => {
    const d = /** @type {any} */ (globalThis).document;
    const button = d.querySelector(`#license-list tr[data-license-id="${id}"] button`);
    const seen = (selector) => new Promise((resolve) => {
      const found = d.querySelector(selector);
      if (found !== null) return resolve(found);
      const observer = new MutationObserver(() => {
        const node = d.querySelector(selector);
        if (node !== null) { observer.disconnect(); resolve(node); }
      });
      observer.observe(d.body, { childList: true, subtree: true });
    });
    const started = performance.now();
    button.click();
    const modelUrl = (await seen('#package-model-url')).textContent;
    const atUrl = performance.now() - started;
    if (way === 'direct') {
      await seen('#textures canvas');
      return { ms: performance.now() - started, stages: { modelUrl: atUrl } };
    }
    const image = new Image();
    const src = new URL(texture, modelUrl).href;
    image.src = src;
    await image.decode();
    const atDecoded = performance.now() - started;
    const canvas = d.createElement('canvas');
    canvas.width = image.naturalWidth;
    canvas.height = image.naturalHeight;
    canvas.getContext('2d').drawImage(image, 0, 0);
    const ms = performance.now() - started;
    const rt = /** @type {PerformanceResourceTiming | undefined} */ (performance.getEntriesByName(src).at(-1));
    const rel = (t) => (rt === undefined || t === 0 ? NaN : t - started);
    return { ms, stages: { modelUrl: atUrl, workerStart: rel(rt?.workerStart ?? 0), fetchStart: rel(rt?.fetchStart ?? 0),
      responseStart: rel(rt?.responseStart ?? 0), responseEnd: rel(rt?.responseEnd ?? 0), decoded: atDecoded, ...Object.fromEntries((rt?.serverTiming ?? []).map((e) => [e.name, e.duration])) } };
  }, { way, id: licenseId, texture });
}

const times = { direct: [], url: [] };
/** @type {Record<string, number[]>} */
const stageTimes = {};
const load = [loadavg()[0]];
for (let i = 0; i < OPENS; i++) {
  const way = i % 2 === 0 ? 'direct' : 'url';
  const { ms, stages } = await once(way, licenseId);
  if (process.env.BENCH_VERBOSE) console.log(way, Math.round(ms), Object.entries(stages).map(([k, v]) => `${k} ${Math.round(v)}`).join(', '));
  // Let the page settle (the built-in runtime finishes, the list redraws) before the next click.
  await page.waitForSelector('#viewer-status .notice.success');
  await page.waitForSelector(`#license-list tr[data-license-id="${licenseId}"] button:not([disabled])`);
  if (i >= 2) {
    times[way].push(ms);
    for (const [k, v] of Object.entries(stages)) (stageTimes[`${way} ${k}`] ??= []).push(v);
  }
}
load.push(loadavg()[0]);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
/** Nearest-rank percentile. */
const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.max(0, Math.ceil(xs.length * p) - 1)];
const direct = median(times.direct);
const viaUrl = median(times.url);
console.log(`open -> first texture drawn, ${ATLAS}x${ATLAS} atlas, ${RUNS} runs each, load average ${load.map((l) => l.toFixed(1)).join(' -> ')}`);
console.log(`  direct (resolver ImageBitmap): median ${direct.toFixed(0)} ms, p90 ${pct(times.direct, 0.9).toFixed(0)} ms, p95 ${pct(times.direct, 0.95).toFixed(0)} ms`);
console.log(`  url (service worker, PNG):     median ${viaUrl.toFixed(0)} ms, p90 ${pct(times.url, 0.9).toFixed(0)} ms, p95 ${pct(times.url, 0.95).toFixed(0)} ms`);
console.log(`  ratio url/direct: ${(viaUrl / direct).toFixed(2)}x (goal <= 1.3x)`);
const stageLine = (way) => Object.entries(stageTimes).filter(([k]) => k.startsWith(`${way} `))
  .map(([k, v]) => `${k.slice(way.length + 1)} ${median(v.filter((x) => Number.isFinite(x))).toFixed(0)}`).join(', ');
console.log(`  stages, medians in ms from the click: direct: ${stageLine('direct')}, canvas ${direct.toFixed(0)}`);
console.log(`                                        url: ${stageLine('url')}`);
await browser.close();
await server.close();
await rm(dir, { recursive: true, force: true });
