#!/usr/bin/env node
// make bench-load: key releases per second against one service process on 127.0.0.1
// (issue 16 item 3). Starts server/dist/main.js on a temporary data directory (PGlite,
// durable) or, with DATABASE_URL set, on that PostgreSQL; makes a seller, a buyer, a small
// real master and a license; then N connections (keep-alive) post key releases back to back
// for the given seconds and report releases/s and latency percentiles. The release limits are
// raised for the run so that every release is granted and counted. Not in CI.
//
//   node bench/load.mjs [--seconds 10] [--connections 16]
import { spawn } from 'node:child_process';
import { createPrivateKey, generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { collect, encodePng, loadWasm, SigningKey, toBase64Url, writeContainer } from '../ts/dist/index.js';

const { values } = parseArgs({ options: { seconds: { type: 'string', default: '10' }, connections: { type: 'string', default: '16' } } });
const seconds = Number(values.seconds);
const connections = Number(values.connections);
const dataDir = mkdtempSync(join(tmpdir(), 'iki-load-'));
const env = { PATH: process.env.PATH, IKI_RELEASES_PER_LICENSE_PER_HOUR: '100000', IKI_RELEASES_PER_USER_PER_HOUR: '1000000',
  IKI_SIGN_IN_FAILURES_PER_IP: '1000', IKI_MAILS_PER_IP: '1000' };
if (process.env.DATABASE_URL) Object.assign(env, { DATABASE_URL: process.env.DATABASE_URL, IKI_BLOB_STORE: 'postgres',
  IKI_ROOT_SECRET: randomBytes(32).toString('base64url'), IKI_PUBLIC_URL: 'http://iki.bench' });
if (process.env.IKI_PGLITE_DURABLE) env.IKI_PGLITE_DURABLE = process.env.IKI_PGLITE_DURABLE;
const child = spawn(process.execPath, [...(process.env.BENCH_PROF ? ['--cpu-prof', '--cpu-prof-dir=/tmp/w-data-prof'] : []), 'server/dist/main.js', '--port', '0', '--data', dataDir], { env, stdio: ['ignore', 'ignore', 'pipe'] });
const logs = [];
let pending = '';
const port = await new Promise((resolve, reject) => {
  child.once('exit', (code) => reject(new Error(`service exited with ${code}`)));
  child.stderr.on('data', (d) => {
    pending += d;
    const lines = pending.split('\n');
    pending = lines.pop();
    for (const line of lines.filter((l) => l.startsWith('{'))) {
      const entry = JSON.parse(line);
      logs.push(entry);
      if (entry.message === 'iki service listening') resolve(entry.port);
    }
  });
});
const agent = new Agent({ keepAlive: true, maxSockets: connections });
function call(method, path, { token, json, body, type } = {}) {
  return new Promise((resolve, reject) => {
    const headers = {};
    if (token) headers.authorization = `Bearer ${token}`;
    const payload = json !== undefined ? Buffer.from(JSON.stringify(json)) : body;
    if (json !== undefined) headers['content-type'] = 'application/json';
    if (type) headers['content-type'] = type;
    if (payload) headers['content-length'] = String(payload.length);
    const req = request({ host: '127.0.0.1', port, path, method, headers, agent }, (res) => {
      const parts = [];
      res.on('data', (c) => parts.push(c));
      res.on('end', () => {
        const text = Buffer.concat(parts).toString();
        resolve({ status: res.statusCode, body: text.startsWith('{') ? JSON.parse(text) : text });
      });
    });
    req.on('error', reject);
    req.end(payload);
  });
}
async function user(name) {
  const email = `${name.toLowerCase()}-${randomBytes(4).toString("hex")}@example.com`;
  const password = 'correct horse battery staple';
  const made = await call("POST", "/api/accounts", { json: { email, password, name } });
  if (made.status !== 201 && made.status !== 202) throw new Error(`sign-up: ${made.status} ${JSON.stringify(made.body)}`);
  let link;
  for (let i = 0; i < 100 && link === undefined; i += 1) {
    await new Promise((r) => setTimeout(r, 100));
    link = logs.filter((l) => l.to === email).at(-1)?.link;
  }
  await call('POST', '/api/accounts/verify', { json: { token: new URL(link).searchParams.get('token') } });
  const session = await call('POST', '/api/sessions', { json: { email, password } });
  return { id: session.body.accountId, token: session.body.accessToken };
}
try {
  await loadWasm();
  const seller = await user('Seller');
  const buyer = await user('Buyer');
  const key = SigningKey.generate();
  const seed = key.exportSeed();
  const pk = createPrivateKey({ key: Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), seed]), format: 'der', type: 'pkcs8' });
  const proof = sign(null, Buffer.from(`IKI-KEY-REGISTRATION-V1\0${seller.id}`), pk);
  const reg = await call('POST', '/api/keys/signing', { token: seller.token, json: { publicKey: toBase64Url(key.publicKey), proof: toBase64Url(proof), name: 'bench' } });
  const keys = (await call('GET', '/api/keys/service')).body;
  const rgba = new Uint8Array(randomBytes(256 * 128 * 4));
  const master = await collect(writeContainer([
    { path: 'm.model3.json', type: 'application/json', encoding: 'deflate', data: Buffer.from('{"Version":3}'), size: 13 },
    { path: 'tex.png', type: 'image/x-rgba8', encoding: 'rgba8', data: rgba, size: rgba.length, meta: { kind: 'texture', width: 256, height: 128, source: 'image/png' } },
  ], { kind: 'model', signingKey: key, signer: { kind: 'account', account: seller.id, certificate: reg.body.certificate },
    meta: { format: 'iki-model', version: 1, name: 'Bench', role: 'master' },
    protection: { recipients: [Buffer.from(keys.x25519PublicKey, 'base64url')] } }));
  void encodePng;
  const up = await call('POST', '/api/licenses/masters', { token: seller.token, type: 'application/vnd.iki.model', body: Buffer.from(master) });
  if (up.status !== 201) throw new Error(`upload: ${up.status} ${JSON.stringify(up.body)}`);
  const lic = await call('POST', `/api/licenses/masters/${up.body.masterId}/licenses`, { token: seller.token, json: { accountId: buyer.id } });
  const licenseId = lic.body.licenseId;
  const playerKey = generateKeyPairSync('x25519').publicKey.export({ format: 'der', type: 'spki' }).subarray(12).toString('base64url');
  // Warm up, then measure.
  for (let i = 0; i < 50; i += 1) await call('POST', `/api/licenses/${licenseId}/key`, { token: buyer.token, json: { publicKey: playerKey } });
  const latencies = [];
  const statuses = new Map();
  const end = performance.now() + seconds * 1000;
  await Promise.all(Array.from({ length: connections }, async () => {
    while (performance.now() < end) {
      const t0 = performance.now();
      const answer = await call('POST', `/api/licenses/${licenseId}/key`, { token: buyer.token, json: { publicKey: playerKey } });
      latencies.push(performance.now() - t0);
      statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
    }
  }));
  latencies.sort((a, b) => a - b);
  const pct = (p) => latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))].toFixed(1);
  console.log(JSON.stringify({ engine: process.env.DATABASE_URL ? 'postgres' : `pglite${env.IKI_PGLITE_DURABLE === '0' ? '' : ' (durable)'}`,
    connections, seconds, releases: latencies.length, perSecond: Math.round(latencies.length / seconds),
    p50ms: Number(pct(0.5)), p99ms: Number(pct(0.99)), statuses: Object.fromEntries(statuses) }));
} finally {
  agent.destroy();
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
  rmSync(dataDir, { recursive: true, force: true });
}
