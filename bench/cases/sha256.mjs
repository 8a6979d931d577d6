// @ts-check
/**
 * Streaming SHA-256 (the container's hash: whole-file, entry and signature digests), fed in
 * 1 MiB updates, through iki's WASM beside @noble/hashes, libsodium.js, hash-wasm and
 * node:crypto.
 */
import { createHash, randomBytes } from 'node:crypto';
import { sha256 } from '@noble/hashes/sha2.js';
import sodium from 'libsodium-wrappers-sumo';
import { createSHA256 } from 'hash-wasm';
import { compare, table } from '../lib/harness.mjs';
import { glue } from '../lib/iki.mjs';

const PIECE = 1 << 20;

export async function run(options) {
  await sodium.ready;
  const pieces = options.quick ? 8 : 32;
  const data = new Uint8Array(randomBytes(PIECE * pieces));
  const parts = Array.from({ length: pieces }, (_, i) => data.subarray(i * PIECE, (i + 1) * PIECE));
  const hex = (d) => Buffer.from(d).toString('hex');
  const expected = createHash('sha256').update(data).digest('hex');
  const hw = await createSHA256();
  const impls = {
    'iki (WASM)': () => { const h = new glue.Sha256Hasher(); try { for (const p of parts) h.update(p); return h.finish(); } finally { h.free(); } },
    '@noble/hashes': () => { const h = sha256.create(); for (const p of parts) h.update(p); return h.digest(); },
    'libsodium.js (WASM)': () => { const s = sodium.crypto_hash_sha256_init(); for (const p of parts) sodium.crypto_hash_sha256_update(s, p); return sodium.crypto_hash_sha256_final(s); },
    'hash-wasm (WASM)': () => { hw.init(); for (const p of parts) hw.update(p); return hw.digest('binary'); },
    'node:crypto (native)': () => { const h = createHash('sha256'); for (const p of parts) h.update(p); return h.digest(); },
  };
  const rows = await compare(Object.entries(impls).map(([name, fn]) => ({
    name, run: fn, check: () => { if (hex(fn()) !== expected) throw new Error(`${name}: wrong digest`); },
  })), { rounds: options.rounds, minMs: options.minMs, unit: 'MB/s', bytes: data.length });
  const md = [
    '## SHA-256 (streaming)',
    '',
    `Goal: 500 MB/s. Each call hashes ${pieces} MiB in 1 MiB updates; every digest is checked against node:crypto's.`,
    '',
    table(rows, 'iki (WASM)'),
  ].join('\n');
  return { md, data: { rows } };
}
