// @ts-check
/**
 * The native reference pipelines: node:crypto (ChaCha20-Poly1305, SHA-256, Ed25519) and
 * node:zlib doing the work of iki's pipelines on the same chunks, without the container
 * format's parsing and without the watermark. Node has no XChaCha20, so chunks use the
 * IETF AEAD with a 12-byte counter nonce (the same per-byte work).
 */
import { createCipheriv, createDecipheriv, createHash, generateKeyPairSync, randomBytes, sign, verify } from 'node:crypto';
import { deflateRawSync, inflateRawSync } from 'node:zlib';

const AAD = randomBytes(45);

function nonce(n) {
  const out = Buffer.alloc(12);
  out.writeUInt32LE(n, 0);
  return out;
}

export function seal(key, n, data) {
  const c = createCipheriv('chacha20-poly1305', key, nonce(n), { authTagLength: 16 });
  c.setAAD(AAD, { plaintextLength: data.length });
  return Buffer.concat([c.update(data), c.final(), c.getAuthTag()]);
}

export function open(key, n, sealed) {
  const d = createDecipheriv('chacha20-poly1305', key, nonce(n), { authTagLength: 16 });
  d.setAAD(AAD, { plaintextLength: sealed.length - 16 });
  d.setAuthTag(sealed.subarray(sealed.length - 16));
  return Buffer.concat([d.update(sealed.subarray(0, sealed.length - 16)), d.final()]);
}

/** A reference "file": per entry its sealed level-6 chunks and SHA-256; signed. */
export function referenceWrite(plan, key, signer) {
  const whole = createHash('sha256');
  let n = 0;
  const entries = plan.map(({ parts }) => {
    const entryHash = createHash('sha256');
    const chunks = parts.map((part) => {
      entryHash.update(part);
      const sealed = seal(key, ++n, deflateRawSync(part, { level: 6 }));
      whole.update(sealed);
      return sealed;
    });
    return { chunks, sha256: entryHash.digest('hex') };
  });
  const digest = whole.digest();
  return { entries, digest, signature: sign(null, digest, signer.privateKey) };
}

/** Opens a reference file: every chunk authenticated and inflated, hashes and signature checked. */
export function referenceOpen(file, plan, key, signer, onChunk = () => {}) {
  const whole = createHash('sha256');
  let n = 0;
  file.entries.forEach((entry, e) => {
    const entryHash = createHash('sha256');
    entry.chunks.forEach((sealed, i) => {
      whole.update(sealed);
      const plain = inflateRawSync(open(key, ++n, sealed));
      if (plain.length !== plan[e].parts[i].length) throw new Error('reference: wrong chunk length');
      entryHash.update(plain);
      onChunk(e, plain);
    });
    if (entryHash.digest('hex') !== entry.sha256) throw new Error('reference: entry hash mismatch');
  });
  if (!verify(null, whole.digest(), signer.publicKey, file.signature)) throw new Error('reference: bad signature');
}

/**
 * The license copy's work: open the master as above, deflate each chunk at `level` (iki's
 * COPY_DEFLATE_LEVEL), seal it again, sign.
 */
export function referenceCopy(file, plan, key, signer, copyKey, copySigner, level) {
  const whole = createHash('sha256');
  let n = 0;
  const out = [];
  referenceOpen(file, plan, key, signer, (_, plain) => {
    const sealed = seal(copyKey, ++n, deflateRawSync(plain, { level }));
    whole.update(sealed);
    out.push(sealed);
  });
  out.push(sign(null, whole.digest(), copySigner.privateKey));
  return out;
}

export function referenceKeys() {
  return { key: randomBytes(32), signer: generateKeyPairSync('ed25519'), copyKey: randomBytes(32), copySigner: generateKeyPairSync('ed25519') };
}
