#!/usr/bin/env node
// make bench-load: key releases and sign-ins per second against service processes on
// 127.0.0.1 (issues 13 and 16). Starts server/dist/main.js on a temporary data directory
// (PGlite, durable) or, with DATABASE_URL set, on that PostgreSQL (then `--instances 2` starts
// two processes on it and splits the connections across them); makes a seller, `--licenses`
// buyers with one license each, and a small real master. Then, each for the given seconds,
// N keep-alive connections post back to back:
//   - releases, many licenses: each request releases the next buyer's license (round robin),
//     as a seller with many buyers sees it (the headline row);
//   - releases, one license: every request releases one license of one buyer (those serialize
//     on the license's and the buyer's rows);
//   - sign-ins: password sign-ins of the buyers in turn (Argon2id each).
// Release limits are raised for the run so that every release is granted and counted (each is
// a real release with its row, count and event). Prints one JSON line per row with the load
// average. Not in CI.
//
// Issue 28 item 1: the cost that does not depend on the machine's load is the service's CPU per
// release, from /proc/<pid>/stat (utime + stime of the process, all its threads), printed per
// row beside p50 and p99; `--connections 1,16,64` runs each row at each count. With `taskset`
// and at least two cores the client runs pinned to the last core and the service processes to
// the others (`--no-pin` to turn it off), so the client's own work does not queue the
// service's. `--dist DIR` starts another build's service (`DIR/main.js`, e.g. the main
// checkout's `server/dist`), for a before-and-after in the same minutes.
//
// `--idle N` first measures the service idle for N seconds (no request) and prints its CPU per
// second; each row then gives the CPU per release net of that idle cost too.
//
//   node bench/load.mjs [--seconds 10] [--connections 1,16,64] [--licenses 64] [--instances 1]
//                       [--rows many,one,sign-ins] [--fsyncs] [--no-pin] [--dist server/dist]
//                       [--warm-up 3] [--idle 5]
import { spawn, spawnSync } from 'node:child_process';
import { createPrivateKey, generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { collect, loadWasm, SigningKey, toBase64Url, writeContainer } from '../ts/dist/index.js';

const USAGE = `Usage: node bench/load.mjs [options]   (make bench-load BENCH_ARGS="...")

Key releases and sign-ins per second against service processes on 127.0.0.1: PGlite (durable)
in a temporary data directory, or the PostgreSQL of DATABASE_URL.

  --seconds <n>       seconds each row runs (10)
  --connections <l>   keep-alive connections posting back to back; a list runs each row at
                      each count (1,16,64)
  --licenses <n>      buyers with one license each for the round-robin row (64)
  --instances <n>     service processes on one PostgreSQL (1; more needs DATABASE_URL)
  --rows <list>       rows to run, comma-separated: many, one, sign-ins (all)
  --fsyncs            count the service's fsync calls per request with strace (Linux, strace
                      installed): the group commit of PGlite releases
  --no-pin            do not pin the client and the service to separate cores with taskset
  --dist <dir>        the service build to start (server/dist)
  --warm-up <n>       seconds of releases at 16 connections before the rows (3): V8 optimizes
                      the hot path only after some thousands of releases, which a 1-connection
                      row alone would pay for
  --idle <n>          seconds the service is measured idle after the set-up (5): its CPU per
                      second with no request, printed, and each row's CPU per release also net
                      of it (what the releases cost beside the idle instance's timers)
  -h, --help          show this help
`;
let values;
try {
  ({ values } = parseArgs({ options: {
    seconds: { type: 'string', default: '10' }, connections: { type: 'string', default: '1,16,64' },
    'no-pin': { type: 'boolean', default: false }, dist: { type: 'string', default: 'server/dist' },
    licenses: { type: 'string', default: '64' }, instances: { type: 'string', default: '1' },
    rows: { type: 'string', default: 'many,one,sign-ins' }, idle: { type: 'string', default: '5' },
    'warm-up': { type: 'string', default: '3' }, fsyncs: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  } }));
} catch (err) {
  process.stderr.write(`${err.message}\n\n${USAGE}`);
  process.exit(2);
}
if (values.help) {
  process.stdout.write(USAGE);
  process.exit(0);
}
/**
 * Pinning: with taskset and two cores or more, this script runs again under `taskset -c <last>`
 * (the client on its own core) and starts the services on the other cores.
 */
const cores = availableParallelism();
// In the pinned run, this process sees one core: the plan comes from its parent.
const plan = process.env.IKI_BENCH_PINNED?.split('|');
const canPin = plan !== undefined
  || (!values['no-pin'] && cores >= 2 && spawnSync('taskset', ['-V']).status === 0);
const clientCore = plan?.[0] ?? String(cores - 1);
const serviceCores = plan?.[1] ?? (cores === 2 ? '0' : `0-${cores - 2}`);
if (canPin && plan === undefined) {
  const run = spawnSync('taskset', ['-c', clientCore, process.execPath, ...process.argv.slice(1)],
    { stdio: 'inherit', env: { ...process.env, IKI_BENCH_PINNED: `${clientCore}|${serviceCores}` } });
  process.exit(run.status ?? 1);
}
const seconds = Number(values.seconds);
const connectionCounts = values.connections.split(',').map(Number);
let connections = connectionCounts[0];
const buyerCount = Math.max(1, Number(values.licenses));
const instanceCount = Math.max(1, Number(values.instances));
const rows = values.rows.split(',');
if (instanceCount > 1 && !process.env.DATABASE_URL) throw new Error('--instances 2 needs DATABASE_URL (one shared PostgreSQL)');
const dataDir = mkdtempSync(join(tmpdir(), 'iki-load-'));
const env = { PATH: process.env.PATH, IKI_DRAIN_DELAY_SECONDS: '0', IKI_MAX_CONNECTIONS_PER_CLIENT: '1000', IKI_RELEASES_PER_LICENSE_PER_HOUR: '100000', IKI_RELEASES_PER_USER_PER_HOUR: '1000000',
  IKI_SIGN_IN_FAILURES_PER_IP: '1000', IKI_SIGN_INS_PER_IP: '100000',
  // Every run signs up its buyers from 127.0.0.1, on the same PostgreSQL database when DATABASE_URL
  // is set: mail limits that let 15 runs an hour through would refuse the sign-ups of the 16th.
  IKI_MAILS_PER_IP: '1000000', IKI_MAILS_TOTAL: '10000000' };
if (process.env.DATABASE_URL) Object.assign(env, { DATABASE_URL: process.env.DATABASE_URL, IKI_BLOB_STORE: 'postgres',
  IKI_ROOT_SECRET: randomBytes(32).toString('base64url'), IKI_PUBLIC_URL: 'http://iki.bench' });
for (const name of ['IKI_PGLITE_DURABLE', 'IKI_WORKERS', 'IKI_DB_POOL']) if (process.env[name]) env[name] = process.env[name];
const engine = process.env.DATABASE_URL ? 'postgres' : `pglite${env.IKI_PGLITE_DURABLE === '0' ? '' : ' (durable)'}`;

const logs = [];
const children = [];
function startInstance() {
  const prof = process.env.BENCH_PROF ? ['--cpu-prof', '--cpu-prof-dir=/tmp/iki-load-prof'] : [];
  const args = [...prof, join(values.dist, 'main.js'), '--port', '0', '--data', dataDir];
  // taskset execs the service in its own process: the pid is the service's.
  const child = canPin ? spawn('taskset', ['-c', serviceCores, process.execPath, ...args], { env, stdio: ['ignore', 'ignore', 'pipe'] })
    : spawn(process.execPath, args, { env, stdio: ['ignore', 'ignore', 'pipe'] });
  children.push(child);
  let pending = '';
  return new Promise((resolve, reject) => {
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
}
// One after the other: the second waits for the first's migrations (the advisory lock does too).
const ports = [];
for (let i = 0; i < instanceCount; i += 1) ports.push(await startInstance());
let agents = ports.map(() => new Agent({ keepAlive: true, maxSockets: Math.max(16, ...connectionCounts) }));

function call(method, path, { token, json, body, type, via = 0 } = {}) {
  return new Promise((resolve, reject) => {
    const headers = {};
    if (token) headers.authorization = `Bearer ${token}`;
    const payload = json !== undefined ? Buffer.from(JSON.stringify(json)) : body;
    if (json !== undefined) headers['content-type'] = 'application/json';
    if (type) headers['content-type'] = type;
    if (payload) headers['content-length'] = String(payload.length);
    const i = via % ports.length;
    const req = request({ host: '127.0.0.1', port: ports[i], path, method, headers, agent: agents[i] }, (res) => {
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
const password = 'correct horse battery staple';
async function user(name) {
  const email = `${name.toLowerCase()}-${randomBytes(4).toString('hex')}@example.com`;
  const made = await call('POST', '/api/accounts', { json: { email, password, name } });
  if (made.status !== 201 && made.status !== 202) throw new Error(`sign-up: ${made.status} ${JSON.stringify(made.body)}`);
  let link;
  for (let i = 0; i < 200 && link === undefined; i += 1) {
    await new Promise((r) => setTimeout(r, 100));
    link = logs.filter((l) => l.to === email).at(-1)?.link;
  }
  await call('POST', '/api/accounts/verify', { json: { token: new URL(link).searchParams.get('token'), password } });
  const session = await call('POST', '/api/sessions', { json: { email, password } });
  return { id: session.body.accountId, token: session.body.accessToken, email };
}

/** CPU seconds (user + system) used so far by process `pid`, from /proc (Linux); 0 elsewhere. */
function cpuOf(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}
/**
 * CPU seconds of every PostgreSQL process on this machine (other users' work included), by pid:
 * a backend that exits during a row takes its CPU time with it, so a row sums the growth of the
 * processes alive at its end (a lower bound; before, one ended backend made the sum negative).
 */
function postgresCpu() {
  const byPid = new Map();
  for (const pid of readdirSync('/proc').filter((d) => /^[0-9]+$/.test(d))) {
    try {
      if (readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'postgres') byPid.set(pid, cpuOf(pid));
    } catch { /* gone */ }
  }
  return byPid;
}
function cpuNow() {
  const own = process.cpuUsage();
  return { at: performance.now(), service: children.reduce((sum, c) => sum + cpuOf(c.pid), 0), client: (own.user + own.system) / 1e6,
    postgres: process.env.DATABASE_URL ? postgresCpu() : new Map() };
}
/** CPU seconds spent between two `cpuNow()` readings, for `k`. */
function cpuSpent(k, before, after) {
  if (k !== 'postgres') return after[k] - before[k];
  let sum = 0;
  for (const [pid, seconds] of after.postgres) sum += Math.max(0, seconds - (before.postgres.get(pid) ?? 0));
  return sum;
}

/** The service's CPU seconds per second with no request (`--idle`), printed as a row; 0 for 0 s. */
let idleCpuPerSecond = 0;
async function idleCpu(idleSeconds) {
  if (!(idleSeconds > 0)) return 0;
  // Let the warm-up's connections, timers and collections settle first.
  await new Promise((r) => setTimeout(r, 1000));
  const before = loadavg();
  const c0 = cpuNow();
  await new Promise((r) => setTimeout(r, idleSeconds * 1000));
  const c1 = cpuNow();
  const perSecond = cpuSpent('service', c0, c1) / ((c1.at - c0.at) / 1000);
  console.log(JSON.stringify({ row: 'idle', engine, build: values.dist, instances: ports.length, seconds: idleSeconds,
    serviceCpuMsPerSecond: Number((perSecond * 1000).toFixed(2)),
    load: [...before, ...loadavg()].map((l) => Number(l.toFixed(2))) }));
  return perSecond;
}

/**
 * With `--fsyncs`: strace attached to every service process (all its threads) for one row,
 * writing each fsync/fdatasync to a file; `stop()` detaches and returns how many there were.
 */
async function traceFsyncs() {
  if (!values.fsyncs) return { stop: async () => undefined };
  const traces = await Promise.all(children.map(async (c, i) => {
    const file = join(dataDir, `fsyncs.${i}.txt`);
    const tracer = spawn('strace', ['-f', '-e', 'trace=fsync,fdatasync', '-o', file, '-p', String(c.pid)],
      { stdio: ['ignore', 'ignore', 'pipe'] });
    // strace says "Process N attached" for each thread once it traces it.
    await new Promise((resolve, reject) => {
      tracer.once('exit', (code) => reject(new Error(`strace exited with ${code} (is it installed, and may it trace?)`)));
      tracer.stderr.on('data', (d) => { if (String(d).includes('attached')) resolve(); });
    });
    await new Promise((r) => setTimeout(r, 300));
    return { tracer, file };
  }));
  return {
    async stop() {
      let total = 0;
      for (const { tracer, file } of traces) {
        const exited = new Promise((r) => tracer.once('exit', r));
        tracer.kill('SIGINT');
        await exited;
        total += readFileSync(file, 'utf8').split('\n').filter((l) => /\bf(data)?sync\(/.test(l)).length;
      }
      return total;
    },
  };
}

/**
 * `connections` loops posting `next(i)` back to back for `seconds`; latencies, statuses, and
 * the CPU milliseconds each request cost the service processes, this client and PostgreSQL
 * (what bounds the rate on a machine of two cores whatever the load of others).
 */
async function drive(label, next) {
  const latencies = [];
  const statuses = new Map();
  const before = loadavg();
  const fsyncs = await traceFsyncs();
  const cpu0 = cpuNow();
  const end = performance.now() + seconds * 1000;
  let n = 0;
  await Promise.all(Array.from({ length: connections }, async (_, conn) => {
    while (performance.now() < end) {
      const t0 = performance.now();
      const answer = await next(n++, conn);
      latencies.push(performance.now() - t0);
      statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
    }
  }));
  const cpu1 = cpuNow();
  const fsyncCount = await fsyncs.stop();
  const perRequest = (k) => Number((cpuSpent(k, cpu0, cpu1) * 1000 / Math.max(1, latencies.length)).toFixed(2));
  const elapsed = (cpu1.at - cpu0.at) / 1000;
  const serviceNet = (cpuSpent('service', cpu0, cpu1) - idleCpuPerSecond * elapsed) * 1000 / Math.max(1, latencies.length);
  latencies.sort((a, b) => a - b);
  const pct = (p) => Number(latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))].toFixed(1));
  const row = { row: label, engine, build: values.dist, pinned: canPin ? `client on core ${clientCore}, service on ${serviceCores}` : false,
    instances: ports.length, connections, seconds, requests: latencies.length,
    perSecond: Math.round(latencies.length / seconds), p50ms: pct(0.5), p99ms: pct(0.99),
    statuses: Object.fromEntries(statuses),
    ...(fsyncCount === undefined ? {} : { fsyncs: fsyncCount, fsyncsPerRequest: Number((fsyncCount / Math.max(1, latencies.length)).toFixed(3)) }),
    cpuMsPerRequest: { service: perRequest('service'), serviceNetOfIdle: Number(serviceNet.toFixed(2)),
      client: perRequest('client'), postgres: perRequest('postgres') },
    load: [...before, ...loadavg()].map((l) => Number(l.toFixed(2))) };
  console.log(JSON.stringify(row));
  return row;
}

try {
  await loadWasm();
  const seller = await user('Seller');
  const buyers = [];
  for (let i = 0; i < buyerCount; i += 8) {
    buyers.push(...await Promise.all(Array.from({ length: Math.min(8, buyerCount - i) }, (_, j) => user(`Buyer${i + j}`))));
  }
  const key = SigningKey.generate();
  const pk = createPrivateKey({ key: Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), key.exportSeed()]), format: 'der', type: 'pkcs8' });
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
  const up = await call('POST', '/api/licenses/masters', { token: seller.token, type: 'application/vnd.iki.model', body: Buffer.from(master) });
  if (up.status !== 201) throw new Error(`upload: ${up.status} ${JSON.stringify(up.body)}`);
  for (const buyer of buyers) {
    const lic = await call('POST', `/api/licenses/masters/${up.body.masterId}/licenses`, { token: seller.token, json: { accountId: buyer.id } });
    if (lic.status !== 201) throw new Error(`license: ${lic.status} ${JSON.stringify(lic.body)}`);
    buyer.licenseId = lic.body.licenseId;
  }
  const playerKey = generateKeyPairSync('x25519').publicKey.export({ format: 'der', type: 'spki' }).subarray(12).toString('base64url');
  const release = (buyer, conn) => call('POST', `/api/licenses/${buyer.licenseId}/key`, { token: buyer.token, json: { publicKey: playerKey }, via: conn });
  // Warm up every instance on every license, then measure.
  for (let i = 0; i < Math.max(50, buyers.length * ports.length); i += 1) await release(buyers[i % buyers.length], i);
  // Then some thousands more (`--warm-up`): before, the first row (1 connection) ran partly on
  // unoptimized code, 2.0 ms of service CPU per release against 1.3 ms for the same row again
  // after the 16-connection one (2026-11-29, load 10).
  const warmEnd = performance.now() + Number(values['warm-up']) * 1000;
  let warmed = 0;
  await Promise.all(Array.from({ length: 16 }, async (_, conn) => {
    while (performance.now() < warmEnd) await release(buyers[(warmed++) % buyers.length], conn);
  }));
  idleCpuPerSecond = await idleCpu(Number(values.idle));
  for (const count of connectionCounts) {
    connections = count;
    for (const agent of agents) agent.destroy();
    agents = ports.map(() => new Agent({ keepAlive: true, maxSockets: connections }));
    if (rows.includes('many')) await drive(`releases, ${buyers.length} licenses round robin`, (n, conn) => release(buyers[n % buyers.length], conn));
    if (rows.includes('one')) await drive('releases, one license', (_n, conn) => release(buyers[0], conn));
    if (rows.includes('sign-ins')) {
      await drive('sign-ins (password)', (n, conn) => call('POST', '/api/sessions',
        { json: { email: buyers[n % buyers.length].email, password }, via: conn }));
    }
  }
} finally {
  for (const agent of agents) agent.destroy();
  for (const child of children) child.kill('SIGTERM');
  await Promise.all(children.map((child) => (child.exitCode === null ? new Promise((r) => child.once('exit', r)) : undefined)));
  rmSync(dataDir, { recursive: true, force: true });
}
