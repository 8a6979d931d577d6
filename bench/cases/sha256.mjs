// @ts-check
/**
 * Streaming SHA-256 (the container's hash: whole-file, entry and signature digests), fed in
 * 1 MiB updates, through iki's WASM beside @noble/hashes, libsodium.js, hash-wasm and
 * node:crypto, and node:crypto in a child process with the SHA extensions masked
 * (bench/lib/sha256-child.mjs): the native limit for code without SHA instructions.
 */
import { fork } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sha256 } from '@noble/hashes/sha2.js';
import sodium from 'libsodium-wrappers-sumo';
import { createSHA256 } from 'hash-wasm';
import { compare, processCpuUs, table } from '../lib/harness.mjs';
import { api, glue } from '../lib/iki.mjs';

const PIECE = 1 << 20;

export async function run(options) {
  await sodium.ready;
  const pieces = options.quick ? 8 : 32;
  const data = new Uint8Array(randomBytes(PIECE * pieces));
  const parts = Array.from({ length: pieces }, (_, i) => data.subarray(i * PIECE, (i + 1) * PIECE));
  const hex = (d) => Buffer.from(d).toString('hex');
  const expected = createHash('sha256').update(data).digest('hex');
  const hw = await createSHA256();
  const noSha = await startNoShaChild(data);
  const ikiHash = () => { const h = new glue.Sha256Hasher(); try { for (const p of parts) h.update(p); return h.finish(); } finally { h.free(); } };
  const impls = {
    'iki (WASM)': () => withWasmSha256(ikiHash),
    'iki (node:crypto backend, as loaded in Node)': ikiHash,
    '@noble/hashes': () => { const h = sha256.create(); for (const p of parts) h.update(p); return h.digest(); },
    'libsodium.js (WASM)': () => { const s = sodium.crypto_hash_sha256_init(); for (const p of parts) sodium.crypto_hash_sha256_update(s, p); return sodium.crypto_hash_sha256_final(s); },
    'hash-wasm (WASM)': () => { hw.init(); for (const p of parts) hw.update(p); return hw.digest('binary'); },
    'node:crypto (native)': () => { const h = createHash('sha256'); for (const p of parts) h.update(p); return h.digest(); },
    [NO_SHA]: noSha.hash,
  };
  let rows;
  try {
    rows = await compare(Object.entries(impls).map(([name, fn]) => ({
      name, run: fn, extraCpuUs: name === NO_SHA ? noSha.cpuUs : undefined, check: async () => { if (hex(await fn()) !== expected) throw new Error(`${name}: wrong digest`); },
    })), { rounds: options.rounds, minMs: options.minMs, unit: 'MB/s', bytes: data.length });
  } finally {
    noSha.stop();
  }
  const md = [
    '## SHA-256 (streaming)',
    '',
    `Goal: 500 MB/s. Each call hashes ${pieces} MiB in 1 MiB updates; every digest is checked against node:crypto's. The last row is node:crypto (OpenSSL ${process.versions.openssl}) in a child process started with \`OPENSSL_ia32cap=${NO_SHA_MASK}\`, which masks the x86 SHA extensions: OpenSSL's hand-written native code without SHA instructions, which WebAssembly does not have; its figure includes a message round trip per call (well under 1 %). "iki (WASM)" is the core's own SHA-256, as in browsers; the row below it is the same export with the node:crypto backend the Node loader installs (ts/src/host-hash.ts).`,
    '',
    table(rows, 'iki (WASM)'),
  ].join('\n');
  return { md, data: { rows } };
}

/** Runs `fn` with the core's own SHA-256 (the Node loader installs node:crypto; docs/format.md section 2). */
export async function withWasmSha256(fn) {
  await api.useHostSha256(false);
  try {
    return await fn();
  } finally {
    await api.useHostSha256(true);
  }
}

const NO_SHA = 'node:crypto, SHA extensions masked (native)';
const NO_SHA_MASK = ':~0x20000000';

/** The child of bench/lib/sha256-child.mjs over `data`: `hash()` resolves to its digest. */
async function startNoShaChild(data) {
  const dir = mkdtempSync(join(tmpdir(), 'iki-sha-'));
  const file = join(dir, 'data');
  writeFileSync(file, data);
  const child = fork(new URL('../lib/sha256-child.mjs', import.meta.url), [file], {
    env: { ...process.env, OPENSSL_ia32cap: NO_SHA_MASK },
  });
  /** @type {((m: string) => void)[]} */
  const waiting = [];
  child.on('message', (m) => waiting.shift()?.(String(m)));
  const next = () => new Promise((resolve) => waiting.push(resolve));
  await next(); // 'ready'
  rmSync(dir, { recursive: true, force: true });
  return {
    hash: async () => { const reply = next(); child.send('go'); return Buffer.from(await reply, 'hex'); },
    stop: () => child.kill(),
    /** The child's CPU so far, so that its row's CPU per call counts the hashing it does. */
    cpuUs: () => processCpuUs(child.pid ?? 0),
  };
}
