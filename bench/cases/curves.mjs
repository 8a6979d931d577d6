// @ts-check
/**
 * Ed25519 verification (SIGN, key certificates) and X25519 (recipient slots, key release):
 * iki's WASM beside @noble/curves, libsodium.js and node:crypto, in operations per second.
 * iki verifies strictly (ed25519-dalek verify_strict), as the container requires.
 */
import { diffieHellman, generateKeyPairSync, randomBytes, sign, verify } from 'node:crypto';
import { ed25519, x25519 } from '@noble/curves/ed25519.js';
import sodium from 'libsodium-wrappers-sumo';
import { compare, table } from '../lib/harness.mjs';
import { glue } from '../lib/iki.mjs';

function rawKey(keyObject, kind) {
  const jwk = keyObject.export({ format: 'jwk' });
  return new Uint8Array(Buffer.from(kind === 'public' ? jwk.x : jwk.d, 'base64url'));
}

export async function run(options) {
  await sodium.ready;
  const how = { rounds: options.rounds, minMs: options.minMs, unit: /** @type {'ops/s'} */ ('ops/s') };
  // A SIGN-sized message: the signed digest and the signer prefix, about 100 bytes.
  const message = new Uint8Array(randomBytes(100));
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const signature = new Uint8Array(sign(null, message, privateKey));
  const pk = rawKey(publicKey, 'public');
  const bad = signature.slice();
  bad[3] ^= 1;
  const verifiers = {
    'iki (WASM)': (s) => glue.benchEd25519Verify(pk, message, s),
    '@noble/curves': (s) => ed25519.verify(s, message, pk),
    'libsodium.js (WASM)': (s) => sodium.crypto_sign_verify_detached(s, message, pk),
    'node:crypto (native)': (s) => verify(null, message, publicKey, s),
  };
  const ed = await compare(Object.entries(verifiers).map(([name, fn]) => ({
    name,
    run: () => fn(signature),
    check: () => { if (fn(signature) !== true || fn(bad) !== false) throw new Error(`${name}: wrong verdict`); },
  })), how);

  const a = generateKeyPairSync('x25519');
  const b = generateKeyPairSync('x25519');
  const secret = rawKey(a.privateKey, 'private');
  const peer = rawKey(b.publicKey, 'public');
  const nodePeer = b.publicKey;
  const nodeSecret = a.privateKey;
  const expected = Buffer.from(diffieHellman({ privateKey: nodeSecret, publicKey: nodePeer })).toString('hex');
  const dh = {
    'iki (WASM)': () => glue.benchX25519(secret, peer),
    '@noble/curves': () => x25519.getSharedSecret(secret, peer),
    'libsodium.js (WASM)': () => sodium.crypto_scalarmult(secret, peer),
    'node:crypto (native)': () => diffieHellman({ privateKey: nodeSecret, publicKey: nodePeer }),
  };
  const x = await compare(Object.entries(dh).map(([name, fn]) => ({
    name,
    run: fn,
    check: () => { if (Buffer.from(fn()).toString('hex') !== expected) throw new Error(`${name}: wrong shared secret`); },
  })), how);
  const md = [
    '## Ed25519 verify and X25519',
    '',
    'Verification of one signature over a 100-byte message (each implementation must accept it and refuse a flipped bit), and one X25519 shared secret (each must match node:crypto\'s). iki\'s figures include the boundary crossing and, for Ed25519, parsing the public key (strict checks) on every call.',
    '',
    '**Ed25519 verify**', '', table(ed, 'iki (WASM)'), '',
    '**X25519**', '', table(x, 'iki (WASM)'),
  ].join('\n');
  return { md, data: { ed25519: ed, x25519: x } };
}
