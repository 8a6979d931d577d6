// Key-release latency alone and while license copies stream (issue 13 item 1), with the
// worker pool (default) and with the in-thread crypto port (--in-thread), on one in-process
// service (embedded PGlite). Builds one master of two random 4096 x 4096 textures (128 MiB
// decoded; --atlas: the four CC0 fixture atlases, 84.9 MiB decoded, real textures) once, then: releases alone, then releases while COPIES downloads run in a loop.
//
//   make bench-copies BENCH_ARGS=..., or node bench/load/releases-during-copies.mjs [--in-thread] [--copies 2] [--seconds 10]
//   node bench/load/releases-during-copies.mjs --sweep 1,2,4 [--side 2048] [--client socket|fetch]
//   node bench/load/releases-during-copies.mjs --sweep 1 --atlas   (the four CC0 fixture atlases as the master)
//
// Prints p50/p99/max of the releases and the copies' throughput. With --sweep, for each count
// of concurrent downloads: the copies' throughput alone (no release loop), then with the
// release loop, each row with the load average at its end. Needs `make build`.
import { createPrivateKey, randomBytes, sign } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { request } from 'node:http';
import { connect } from 'node:net';
import { tmpdir, cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { collect, fromBase64Url, loadWasm, SigningKey, toBase64Url, writeContainer } from '@iki/core';
import { serve } from '../../server/dist/main.js';
import { wasmCrypto } from '../../server/dist/services/wasm-crypto.js';

const { values } = parseArgs({ options: { 'in-thread': { type: 'boolean', default: false },
  copies: { type: 'string', default: '2' }, sweep: { type: 'string' }, client: { type: 'string', default: 'socket' }, seconds: { type: 'string', default: '10' }, side: { type: 'string', default: '4096' },
  atlas: { type: 'boolean', default: false } } });
const COPIES = Number(values.copies);
const SECONDS = Number(values.seconds);
const SIDE = Number(values.side);

await loadWasm();
const dir = await mkdtemp(join(tmpdir(), 'iki-bench-load-'));
const logs = [];
const logger = { info: (message, fields = {}) => logs.push({ message, fields }), warn: (m, f) => console.error(m, f), error: (m, f) => console.error(m, f) };
const env = { IKI_RELEASES_PER_LICENSE_PER_HOUR: '100000', IKI_RELEASES_PER_USER_PER_HOUR: '1000000',
  IKI_COPIES_PER_LICENSE: '100000', IKI_COPIES_PER_USER: '1000000', IKI_CONCURRENT_COPIES_PER_LICENSE: '100',
  IKI_CONCURRENT_COPIES_PER_USER: '1000', IKI_ACCESS_LOG: 'off' };
const running = await serve({ port: 0, dataDir: dir, env, logger,
  ...(values['in-thread'] ? { crypto: wasmCrypto } : {}) });
const base = running.url;

async function call(method, path, { token, json, body, type } = {}) {
  const headers = {};
  if (token) headers.authorization = `Bearer ${token}`;
  if (json !== undefined) headers['content-type'] = 'application/json';
  if (type) headers['content-type'] = type;
  const r = await fetch(`${base}${path}`, { method, headers, body: json === undefined ? body : JSON.stringify(json) });
  const text = Buffer.from(await r.arrayBuffer());
  return { status: r.status, body: (r.headers.get('content-type') ?? '').includes('json') ? JSON.parse(text.toString()) : text };
}

async function user(name) {
  const email = `${name}-${randomBytes(4).toString('hex')}@example.com`;
  const password = 'correct horse battery staple';
  await call('POST', '/api/accounts', { json: { email, password, name } });
  const link = logs.filter((l) => l.fields.to === email).at(-1).fields.link;
  await call('POST', '/api/accounts/verify', { json: { token: new URL(link).searchParams.get('token'), password } });
  const s = await call('POST', '/api/sessions', { json: { email, password } });
  return { accountId: s.body.accountId, token: s.body.accessToken };
}

const seller = await user('seller');
const buyer = await user('buyer');
const key = SigningKey.generate();
const seed = key.exportSeed();
const der = Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), seed]);
const proof = sign(null, Buffer.from(`IKI-KEY-REGISTRATION-V1\0${seller.accountId}`), createPrivateKey({ key: der, format: 'der', type: 'pkcs8' }));
const reg = await call('POST', '/api/keys/signing', { token: seller.token, json: { publicKey: toBase64Url(key.publicKey), proof: toBase64Url(proof), name: 'bench' } });
if (reg.status !== 201) throw new Error(`register: ${reg.status} ${JSON.stringify(reg.body)}`);
const keys = (await call('GET', '/api/keys/service')).body;
const texture = (i) => {
  const rgba = randomBytes(SIDE * SIDE * 4);
  for (let p = 3; p < rgba.length; p += 4) rgba[p] = 255;
  return { path: `textures/t${i}.png`, type: 'image/x-rgba8', encoding: 'rgba8', data: new Uint8Array(rgba), size: rgba.length,
    meta: { kind: 'texture', width: SIDE, height: SIDE, source: 'image/png' } };
};
/** The fixture atlases as rgba8 entries (decoded by the test suite's own PNG decoder). */
async function atlasTextures() {
  const { atlases } = await import('../lib/textures.mjs');
  return atlases().map(({ name, width, height, rgba }, i) => ({ path: `textures/a${i}.png`, type: 'image/x-rgba8',
    encoding: 'rgba8', data: rgba, size: rgba.length, meta: { kind: 'texture', width, height, source: name } }));
}
const textures = values.atlas ? await atlasTextures() : [texture(0), texture(1)];
/** Decoded pixels per copy: the CPU figures are also given per MiB of these (a copy re-encodes them). */
const pixelBytes = textures.reduce((n, e) => n + e.size, 0);
let t = performance.now();
const master = await collect(writeContainer(textures, { kind: 'model', signingKey: key,
  signer: { kind: 'account', account: seller.accountId, certificate: reg.body.certificate },
  meta: { format: 'iki-model', version: 1, name: 'Bench', role: 'master' },
  protection: { recipients: [fromBase64Url(keys.x25519PublicKey, 32)] } }));
console.log(`master: ${(master.length / 2 ** 20).toFixed(1)} MiB built in ${((performance.now() - t) / 1000).toFixed(1)} s`);
t = performance.now();
const up = await new Promise((resolve, reject) => {
  // A connection of its own (the pool's may have been closed by the service meanwhile).
  const req = request(`${base}/api/licenses/masters`, { method: 'POST', agent: false, headers: {
    authorization: `Bearer ${seller.token}`, 'content-type': 'application/vnd.iki.model', 'content-length': master.length } }, (res) => {
    const parts = [];
    res.on('data', (p) => parts.push(p));
    res.on('end', () => resolve({ status: res.statusCode, body: JSON.parse(Buffer.concat(parts).toString()) }));
  });
  req.on('error', reject);
  req.end(master);
});
if (up.status !== 201) throw new Error(`upload: ${up.status} ${JSON.stringify(up.body)}`);
console.log(`upload + check: ${((performance.now() - t) / 1000).toFixed(1)} s`);
const lic = (await call('POST', `/api/licenses/masters/${up.body.masterId}/licenses`, { token: seller.token, json: { accountId: buyer.accountId } })).body.licenseId;
const publicKey = toBase64Url(randomBytes(32));

async function releases(ms) {
  const times = [];
  const until = performance.now() + ms;
  while (performance.now() < until) {
    const s = performance.now();
    const r = await call('POST', `/api/licenses/${lic}/key`, { token: buyer.token, json: { publicKey } });
    if (r.status !== 200) throw new Error(`release: ${r.status}`);
    times.push(performance.now() - s);
  }
  times.sort((a, b) => a - b);
  const q = (p) => times[Math.min(times.length - 1, Math.floor(p * times.length))].toFixed(1);
  return `${times.length} releases, ${(times.length / (ms / 1000)).toFixed(0)}/s sequential, p50 ${q(0.5)} ms, p99 ${q(0.99)} ms, max ${times.at(-1).toFixed(1)} ms`;
}

/**
 * One copy download over a plain socket into one reused buffer (`onread`), so the client in
 * this process allocates nothing per piece and leaves the event loop and the collector to the
 * service: counts the bytes after the response head (chunked framing included, a few bytes).
 */
const readBuffer = Buffer.alloc(1 << 20);
function download(stats) {
  return new Promise((resolve, reject) => {
    let head = '';
    let inBody = false;
    const socket = connect({ host: '127.0.0.1', port: Number(new URL(base).port), onread: { buffer: readBuffer, callback(n, buf) {
      if (inBody) {
        stats.bytes += n;
        return;
      }
      head += buf.toString('latin1', 0, n);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return;
      if (!head.startsWith('HTTP/1.1 200')) reject(new Error(`copy: ${head.slice(0, 40)}`));
      inBody = true;
      stats.bytes += head.length - end - 4;
    } } });
    socket.on('connect', () => socket.write(`GET /api/licenses/${lic}/model HTTP/1.1\r\nHost: 127.0.0.1\r\n`
      + `Authorization: Bearer ${buyer.token}\r\nConnection: close\r\n\r\n`));
    socket.on('error', reject);
    socket.on('close', resolve);
  });
}

/** The same with fetch (--client fetch, the client of earlier runs): a Buffer per piece, on this event loop. */
async function fetchDownload(stats) {
  const r = await fetch(`${base}/api/licenses/${lic}/model`, { headers: { authorization: `Bearer ${buyer.token}` } });
  for await (const part of r.body) stats.bytes += part.length;
}

async function copyLoop(stop, stats) {
  while (!stop.done) {
    await (values.client === 'fetch' ? fetchDownload(stats) : download(stats));
    stats.copies += 1;
  }
}

/** One whole copy first: its size turns copied bytes into decoded pixels (rgba8) re-encoded. */
const first = { bytes: 0 };
await (values.client === 'fetch' ? fetchDownload(first) : download(first));
const pixelsPerByte = pixelBytes / first.bytes;
console.log(`copy: ${(first.bytes / 2 ** 20).toFixed(2)} MiB for ${(pixelBytes / 2 ** 20).toFixed(1)} MiB of pixels (${(100 / pixelsPerByte).toFixed(2)} %)`);

console.log(`mode: ${values['in-thread'] ? 'in-thread crypto' : `worker pool (${running.config.ops.workers} workers)`}, ${cpus().length} cores`);
const load = () => loadavg().map((l) => l.toFixed(2)).join(' ');

/**
 * CPU seconds (user + system) of the whole process and of its main thread (the event loop),
 * from /proc: unlike wall-clock rates, these do not depend on what else the machine runs.
 */
function cpuSeconds() {
  const ticks = (path) => {
    try {
      const fields = readFileSync(path, 'utf8').replace(/^.*\) /s, '').split(' ');
      return (Number(fields[11]) + Number(fields[12])) / 100;
    } catch {
      return NaN;
    }
  };
  return { process: ticks('/proc/self/stat'), main: ticks(`/proc/self/task/${process.pid}/stat`) };
}

/** Runs `count` copy loops for `ms` (after a 500 ms start) while `during` runs; MiB/s together. */
async function copies(count, ms, during = () => new Promise((r) => setTimeout(r, ms))) {
  const stop = { done: false };
  const stats = { bytes: 0, copies: 0 };
  const loops = Array.from({ length: count }, () => copyLoop(stop, stats));
  await new Promise((r) => setTimeout(r, 500));
  const bytes0 = stats.bytes;
  const t0 = performance.now();
  const cpu0 = cpuSeconds();
  const result = await during(ms);
  const cpu1 = cpuSeconds();
  const mib = (stats.bytes - bytes0) / 2 ** 20;
  const mibs = mib / ((performance.now() - t0) / 1000);
  stop.done = true;
  await Promise.all(loops);
  // CPU milliseconds per MiB copied: on the event loop, and everywhere else (workers, collector helpers, libuv).
  const main = (1000 * (cpu1.main - cpu0.main)) / mib;
  const rest = (1000 * (cpu1.process - cpu0.process)) / mib - main;
  // The same per MiB of decoded pixels the copies re-encoded (equal for the noise master, which does not compress).
  const perPixels = (ms) => (ms / pixelsPerByte).toFixed(2);
  return { mibs, result, cpu: `CPU per MiB: event loop ${main.toFixed(1)} ms, other threads ${rest.toFixed(1)} ms;`
    + ` per MiB of pixels: ${perPixels(main)} ms, ${perPixels(rest)} ms` };
}

if (values.sweep !== undefined) {
  console.log(`alone:              ${await releases(SECONDS * 1000)} (load ${load()})`);
  for (const n of values.sweep.split(',').map(Number)) {
    const alone = await copies(n, SECONDS * 1000);
    console.log(`${n} copies, no releases:   ${alone.mibs.toFixed(1)} MiB/s together; ${alone.cpu} (load ${load()})`);
    const mixed = await copies(n, SECONDS * 1000, releases);
    console.log(`${n} copies with releases:  ${mixed.mibs.toFixed(1)} MiB/s together; ${mixed.result}; ${mixed.cpu} (load ${load()})`);
  }
} else {
  console.log(`alone:              ${await releases(SECONDS * 1000)}`);
  const { mibs, result } = await copies(COPIES, SECONDS * 1000, releases);
  console.log(`during ${COPIES} copies:  ${result}; copies ${mibs.toFixed(0)} MiB/s together (load ${load()})`);
}
await running.close();
await rm(dir, { recursive: true, force: true });
