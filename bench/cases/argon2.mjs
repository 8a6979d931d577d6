// @ts-check
/**
 * Argon2id v0x13 at the password slot's default cost (64 MiB, 3 passes, 1 lane; 32-byte
 * output): iki's WASM beside hash-wasm, libsodium.js and the native argon2 package. Every
 * implementation must produce the same key for the same password and salt.
 */
import { createRequire } from 'node:module';
import sodium from 'libsodium-wrappers-sumo';
import { argon2id as hashWasmArgon2id } from 'hash-wasm';
import { compare, table } from '../lib/harness.mjs';
import { glue } from '../lib/iki.mjs';

const argon2 = createRequire(import.meta.url)('argon2');
const M_KIB = 64 * 1024;
const T = 3;
const P = 1;

export async function run(options) {
  await sodium.ready;
  const password = new TextEncoder().encode('correct horse battery staple');
  const salt = new Uint8Array(16).fill(0x5a);
  const hex = (b) => Buffer.from(b).toString('hex');
  const impls = {
    'iki (WASM)': () => glue.benchArgon2id(password, salt, M_KIB, T, P),
    'hash-wasm (WASM)': () => hashWasmArgon2id({ password, salt, parallelism: P, iterations: T, memorySize: M_KIB, hashLength: 32, outputType: 'binary' }),
    'libsodium.js (WASM)': () => sodium.crypto_pwhash(32, password, salt, T, M_KIB * 1024, sodium.crypto_pwhash_ALG_ARGON2ID13),
    'argon2 (native)': () => argon2.hash(Buffer.from(password), { type: argon2.argon2id, memoryCost: M_KIB, timeCost: T, parallelism: P, hashLength: 32, salt: Buffer.from(salt), raw: true }),
  };
  const expected = hex(await impls['argon2 (native)']());
  const rows = await compare(Object.entries(impls).map(([name, fn]) => ({
    name,
    run: fn,
    check: async () => { if (hex(await fn()) !== expected) throw new Error(`${name}: different key`); },
  })), { rounds: options.quick ? 3 : 5, minMs: 1, unit: 'ms' });
  const md = [
    '## Argon2id (64 MiB, t = 3, p = 1)',
    '',
    'One derivation per call (the cost of opening a password slot); all four give the same 32-byte key. Lower is better: the ratio is the time relative to iki\'s.',
    '',
    table(rows, 'iki (WASM)'),
  ].join('\n');
  return { md, data: { rows } };
}
