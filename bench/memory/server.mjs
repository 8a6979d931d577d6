#!/usr/bin/env node
// Streaming memory of the licensing service (SPEC "Limits": memory during streaming stays
// around one chunk regardless of file size).
//
//   node bench/memory/server.mjs [--mib 512] [--check]      (after `make build`; `make bench-memory`)
//
// Starts the built service (server/dist/main.js, embedded PGlite, masters in a temporary
// folder) in a child process, writes a master of about --mib MiB (incompressible rgba8
// textures, 1 MiB chunks, sealed to the service) to a temporary file, then uploads it with
// a streamed request body and downloads one license copy, discarding it as it arrives. The
// child's resident set is sampled every 20 ms (/proc/<pid>/status VmRSS) and its high-water
// mark is reset before each phase (/proc/<pid>/clear_refs), so each phase's peak is its
// own. Growth = phase peak - RSS just before the phase. The target is < 100 MiB for both.
// --check also opens the downloaded copy with a player session (slow: it reads it twice).
// --settle-ms N (issue 28 item 5): then waits N ms with the service idle and reports its RSS
// when it listened, right after the jobs and after the wait, beside the workers' WebAssembly
// memory (/metrics) and the recycles it logged (IKI_WORKER_RECYCLE_MB=0 for the old behaviour).
// --breakdown (with --settle-ms): at each of those three points also the main thread's
// process.memoryUsage() (memory-usage-preload.mjs, on SIGUSR2) and the resident set by kind of
// mapping (/proc/<pid>/smaps: the brk heap, 64 MiB malloc arenas, other anonymous memory,
// files).
// The service runs with the glibc malloc settings `iki serve` gives it (SERVICE_MALLOC_ENV,
// docs/deploy.md "Memory") unless the environment sets them; --system-malloc runs it without.
import { spawn } from 'node:child_process';
import { createPrivateKey, randomFillSync, sign } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { parseArgs } from 'node:util';
import {
  fromBase64Url, loadWasm, openLicenseCopy, PlayerSession, SigningKey, toBase64Url, writeContainer,
} from '../../ts/dist/index.js';
import { SERVICE_MALLOC_ENV } from '../../ts/dist/cli/serve.js';

const MIB = 1024 * 1024;
const LIMIT_MIB = 100;
const SIDE = 4096; // texture side: 64 MiB of RGBA8 each, 64 rows per 1 MiB chunk

const { values } = parseArgs({ options: { mib: { type: 'string', default: '512' }, check: { type: 'boolean', default: false },
  'settle-ms': { type: 'string', default: '0' }, breakdown: { type: 'boolean', default: false },
  'system-malloc': { type: 'boolean', default: false } } });
const targetMib = Number(values.mib);
if (!Number.isInteger(targetMib) || targetMib < 64) throw new Error('--mib must be an integer of at least 64');

const root = new URL('../../', import.meta.url);
const work = await mkdtemp(join(tmpdir(), 'iki-bench-memory-'));
const say = (text) => process.stdout.write(`${text}\n`);
const mib = (bytes) => (bytes / MIB).toFixed(1);

/** The service in a child process; resolves once it listens, with its port and its log lines. */
async function startServer() {
  const preload = values.breakdown ? ['--import', new URL('bench/memory/memory-usage-preload.mjs', root).href] : [];
  const child = spawn(process.execPath, [...preload, new URL('server/dist/main.js', root).pathname, '--port', '0', '--data', join(work, 'data')],
    { stdio: ['ignore', 'inherit', 'pipe'], env: { ...(values['system-malloc'] ? {} : SERVICE_MALLOC_ENV), ...process.env, IKI_MAX_MASTER_BYTES: String(4 * 1024 * MIB) } });
  const lines = [];
  let buffered = '';
  const port = await new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the service exited (${code})`)));
    child.stderr.on('data', (data) => {
      buffered += data.toString('utf8');
      for (let at = buffered.indexOf('\n'); at >= 0; at = buffered.indexOf('\n')) {
        const text = buffered.slice(0, at);
        buffered = buffered.slice(at + 1);
        // The log is JSON lines; the start also prints one plain line for people ("iki service ready at ...").
        if (text.startsWith('MEMDUMP ')) {
          memoryDumps.shift()?.(JSON.parse(text.slice(8)));
          continue;
        }
        if (!text.startsWith('{')) continue;
        const line = JSON.parse(text);
        lines.push(line);
        if (line.message === 'iki service listening') resolve(line.port);
      }
    });
  });
  return { child, port, lines };
}

/** Waiters for the next memoryUsage line of the child (memory-usage-preload.mjs). */
const memoryDumps = [];

/** The resident set by kind of mapping, in bytes (/proc/<pid>/smaps). */
async function residentByKind(pid) {
  const kinds = {};
  let kind;
  for (const line of (await readFile(`/proc/${pid}/smaps`, 'utf8')).split('\n')) {
    const head = /^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (head) {
      const start = BigInt(`0x${head[1]}`);
      const size = Number(BigInt(`0x${head[2]}`) - start);
      const path = head[4].trim();
      // glibc's non-main arenas are heaps of at most 64 MiB aligned to 64 MiB (HEAP_MAX_SIZE).
      kind = path === '[heap]' ? 'brk' : path.startsWith('[') ? 'other' : path !== '' ? 'files'
        : size <= 64 * MIB && start % BigInt(64 * MIB) === 0n ? 'arenas' : 'anonymous';
      continue;
    }
    const rssLine = /^Rss:\s+(\d+) kB/.exec(line);
    if (rssLine && kind) kinds[kind] = (kinds[kind] ?? 0) + Number(rssLine[1]) * 1024;
  }
  return kinds;
}

/** One line of where the child's memory is (--breakdown). */
async function breakdown(child, label) {
  if (!values.breakdown) return;
  const usage = new Promise((resolve) => memoryDumps.push(resolve));
  child.kill('SIGUSR2');
  const u = await usage;
  const k = await residentByKind(child.pid);
  say(`breakdown ${label}: rss ${mib(u.rss)} | main thread: V8 heap used ${mib(u.heapUsed)} of ${mib(u.heapTotal)}, external ${mib(u.external)}, `
    + `arrayBuffers ${mib(u.arrayBuffers)}, V8 malloced ${mib(u.malloced)} | resident by mapping: brk heap ${mib(k.brk ?? 0)}, `
    + `64 MiB arenas ${mib(k.arenas ?? 0)}, other anonymous ${mib(k.anonymous ?? 0)}, files ${mib(k.files ?? 0)}, other ${mib(k.other ?? 0)}`);
}

function rss(pid, field) {
  return readFile(`/proc/${pid}/status`, 'utf8').then((text) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(text)?.[1] ?? 0) * 1024);
}

/** Runs `phase` while sampling the child's RSS; returns the growth over the RSS before it. */
async function measure(pid, name, phase) {
  await writeFile(`/proc/${pid}/clear_refs`, '5'); // resets VmHWM to the current RSS
  const before = await rss(pid, 'VmRSS');
  let peak = before;
  const timer = setInterval(() => { rss(pid, 'VmRSS').then((v) => { peak = Math.max(peak, v); }, () => {}); }, 20);
  const start = performance.now();
  const result = await phase();
  const seconds = (performance.now() - start) / 1000;
  clearInterval(timer);
  peak = Math.max(peak, await rss(pid, 'VmHWM'));
  const growth = peak - before;
  say(`${name}: RSS before ${mib(before)} MiB, peak ${mib(peak)} MiB, growth ${mib(growth)} MiB, ${seconds.toFixed(1)} s`);
  return { growth, result };
}

async function json(port, method, path, body, token) {
  const headers = { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) };
  const response = await fetch(`http://127.0.0.1:${port}${path}`, { method, headers, ...(body ? { body: JSON.stringify(body) } : {}) });
  const answer = await response.json();
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(answer)}`);
  return answer;
}

async function user(server, name) {
  const email = `${name}@example.com`;
  const password = 'correct horse battery staple';
  await json(server.port, 'POST', '/api/accounts', { email, password, name });
  const link = server.lines.filter((l) => l.to === email).at(-1)?.link;
  await json(server.port, 'POST', '/api/accounts/verify', { token: new URL(link).searchParams.get('token'), password });
  return json(server.port, 'POST', '/api/sessions', { email, password });
}

function proof(key, accountId) {
  const seed = key.exportSeed();
  const der = Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), seed]);
  seed.fill(0);
  return sign(null, Buffer.from(`IKI-KEY-REGISTRATION-V1\0${accountId}`), createPrivateKey({ key: der, format: 'der', type: 'pkcs8' }));
}

/** Random pixels, one 1 MiB piece at a time. */
async function* noise(bytes) {
  for (let left = bytes; left > 0; left -= MIB) yield randomFillSync(new Uint8Array(Math.min(MIB, left)));
}

async function writeMaster(path, key, signer, recipient) {
  const textures = Math.ceil((targetMib * MIB) / (SIDE * SIDE * 4));
  const entries = Array.from({ length: textures }, (_, i) => ({
    path: `Bench.4096/texture_${String(i).padStart(2, '0')}.png`, type: 'image/x-rgba8', encoding: 'rgba8',
    size: SIDE * SIDE * 4, data: noise(SIDE * SIDE * 4), meta: { kind: 'texture', width: SIDE, height: SIDE, source: 'image/png' },
  }));
  const stream = writeContainer(entries, { kind: 'model', signingKey: key, signer, deflateLevel: 1, chunkSize: MIB,
    meta: { format: 'iki-model', version: 1, name: 'Bench', role: 'master' }, protection: { recipients: [recipient] } });
  await pipeline(Readable.fromWeb(stream), createWriteStream(path));
  return (await stat(path)).size;
}

function upload(port, token, path, size) {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/api/licenses/masters', method: 'POST', headers: {
      authorization: `Bearer ${token}`, 'content-type': 'application/vnd.iki.model', 'content-length': String(size) } }, (res) => {
      let text = '';
      res.on('data', (d) => { text += d; });
      res.on('end', () => (res.statusCode === 201 ? resolve(JSON.parse(text)) : reject(new Error(`upload: ${res.statusCode} ${text}`))));
    });
    req.on('error', reject);
    createReadStream(path, { highWaterMark: MIB }).pipe(req);
  });
}

async function download(port, token, licenseId, keep) {
  const response = await fetch(`http://127.0.0.1:${port}/api/licenses/${licenseId}/model`, { headers: { authorization: `Bearer ${token}` } });
  if (response.status !== 200) throw new Error(`download: ${response.status}`);
  let bytes = 0;
  const out = keep ? createWriteStream(keep) : undefined;
  for await (const chunk of response.body) {
    bytes += chunk.length;
    if (out && !out.write(chunk)) await new Promise((resolve) => out.once('drain', resolve));
  }
  if (out) await new Promise((resolve) => out.end(resolve));
  return bytes;
}

await loadWasm();
const server = await startServer();
const idleRss = await rss(server.child.pid, 'VmRSS');
await breakdown(server.child, 'at listen');
/** The workers' WebAssembly memory, summed, from /metrics (loopback, no token). */
async function wasmMemory() {
  const text = await (await fetch(`http://127.0.0.1:${server.port}/metrics`)).text();
  return Number(/^iki_worker_wasm_memory_bytes (\d+)/m.exec(text)?.[1] ?? NaN);
}
try {
  const seller = await user(server, 'seller');
  const key = SigningKey.generate();
  await json(server.port, 'POST', '/api/keys/signing',
    { publicKey: toBase64Url(key.publicKey), proof: proof(key, seller.accountId).toString('base64url') }, seller.accessToken);
  const service = await json(server.port, 'GET', '/api/keys/service');
  const masterPath = join(work, 'master.ikm');
  const size = await writeMaster(masterPath, key, { kind: 'device' }, fromBase64Url(service.x25519PublicKey, 32));
  say(`master: ${mib(size)} MiB (${Math.ceil((targetMib * MIB) / (SIDE * SIDE * 4))} textures of ${SIDE} x ${SIDE}, 1 MiB chunks)`);

  const up = await measure(server.child.pid, 'upload', () => upload(server.port, seller.accessToken, masterPath, size));
  const buyer = await user(server, 'buyer');
  const license = await json(server.port, 'POST', `/api/licenses/masters/${up.result.masterId}/licenses`, { accountId: buyer.accountId }, seller.accessToken);
  const copyPath = values.check ? join(work, 'copy.ikm') : undefined;
  const down = await measure(server.child.pid, 'download', () => download(server.port, buyer.accessToken, license.licenseId, copyPath));
  say(`copy: ${mib(down.result)} MiB`);

  if (copyPath) {
    const session = PlayerSession.create();
    const sealed = await json(server.port, 'POST', `/api/licenses/${license.licenseId}/key`, { publicKey: toBase64Url(session.publicKey) }, buyer.accessToken);
    session.acceptLicenseKey(license.licenseId, { ephemeral: fromBase64Url(sealed.ephemeralPublicKey, 32),
      nonce: fromBase64Url(sealed.nonce, 24), sealed: fromBase64Url(sealed.sealedKey, 48) });
    let plain = 0;
    for await (const event of openLicenseCopy(createReadStream(copyPath, { highWaterMark: MIB }), session, fromBase64Url(service.licenseSigningPublicKey, 32))) {
      if (event.type === 'chunk') plain += event.data.length;
    }
    session.free();
    say(`check: the copy opens with the released key; ${mib(plain)} MiB of pixels`);
  }
  const settleMs = Number(values['settle-ms']);
  if (settleMs > 0) {
    const [afterRss, afterWasm] = [await rss(server.child.pid, 'VmRSS'), await wasmMemory()];
    await breakdown(server.child, 'after the jobs');
    await new Promise((resolve) => setTimeout(resolve, settleMs));
    const [settledRss, settledWasm] = [await rss(server.child.pid, 'VmRSS'), await wasmMemory()];
    await breakdown(server.child, `${settleMs / 1000} s idle later`);
    const recycles = server.lines.filter((l) => l.message === 'recycled a crypto worker past its memory limit').length;
    say(`memory: RSS at listen ${mib(idleRss)} MiB, after the jobs ${mib(afterRss)} MiB (workers' WASM ${mib(afterWasm)} MiB), `
      + `${settleMs / 1000} s idle later ${mib(settledRss)} MiB (workers' WASM ${mib(settledWasm)} MiB), ${recycles} recycles, `
      + `IKI_WORKER_RECYCLE_MB=${process.env.IKI_WORKER_RECYCLE_MB ?? 'default'}, `
      + `malloc ${values['system-malloc'] ? 'glibc defaults' : JSON.stringify({ ...SERVICE_MALLOC_ENV, ...Object.fromEntries(Object.keys(SERVICE_MALLOC_ENV).filter((k) => process.env[k] !== undefined).map((k) => [k, process.env[k]])) })}`);
  }
  const worst = Math.max(up.growth, down.growth);
  say(`result: worst growth ${mib(worst)} MiB (limit ${LIMIT_MIB} MiB): ${worst < LIMIT_MIB * MIB ? 'PASS' : 'FAIL'}`);
  process.exitCode = worst < LIMIT_MIB * MIB ? 0 : 1;
} finally {
  server.child.kill('SIGTERM');
  await new Promise((resolve) => server.child.once('exit', resolve));
  await rm(work, { recursive: true, force: true });
}
