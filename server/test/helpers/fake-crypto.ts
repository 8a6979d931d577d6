/**
 * TEST ONLY. A stand-in for the WASM `LicenseCrypto` so the route and service plumbing can be
 * tested before `@iki/core` exists. It is never imported by `src/`. Its "container" is a toy:
 * the real magic and chunk framing (so the PostgreSQL blob framer sees real frames), a HEAD
 * chunk holding JSON, DATA chunks, and a SIGN chunk laid out as the real one (algorithm 1, the
 * signer's Ed25519 public key, an empty signer JSON) whose 64 "signature" bytes are SHA-256 of
 * everything before it and 32 zeros. It checks what the real module would refuse in spirit
 * (bad magic, tampering, truncation) with the real error codes.
 */
import { createHash, createHmac, createPublicKey, verify } from 'node:crypto';
import type {
  IdentifyResult, LicenseCrypto, LicenseObject, MasterRef, MasterSummary, SealedKey,
} from '../../src/services/crypto-port.js';

export const MODEL_MAGIC = Uint8Array.from([0x89, 0x49, 0x4b, 0x4d, 0x0d, 0x0a, 0x1a, 0x0a]);

class CodedError extends Error {
  constructor(readonly code: string, message: string, readonly details?: Record<string, unknown>) {
    super(message);
  }
}

function chunk(type: string, payload: Uint8Array): Buffer {
  const header = Buffer.alloc(8);
  header.write(type, 0, 'ascii');
  header.writeUInt32LE(payload.length, 4);
  return Buffer.concat([header, payload]);
}

/** Builds a toy master: `dataChunks` DATA chunks of `chunkBytes` each. */
export function fakeMaster(opts: { name: string; signer: Uint8Array; dataChunks?: number; chunkBytes?: number }): Buffer {
  const signHead = Buffer.concat([Buffer.from([1]), opts.signer, Buffer.alloc(4)]);
  const preamble = Buffer.concat([MODEL_MAGIC, Buffer.from([1, 0, 0, 0])]);
  const head = chunk('HEAD', Buffer.from(JSON.stringify({ name: opts.name, role: 'master' })));
  const data = Array.from({ length: opts.dataChunks ?? 3 }, (_, i) =>
    chunk('DATA', Buffer.alloc(opts.chunkBytes ?? 1000, i + 1)));
  const body = Buffer.concat([preamble, head, ...data]);
  const digest = createHash('sha256').update(body).digest();
  return Buffer.concat([body, chunk('SIGN', Buffer.concat([signHead, digest, Buffer.alloc(32)]))]);
}

async function collect(source: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const part of source) parts.push(Buffer.from(part));
  return Buffer.concat(parts);
}

function parse(file: Buffer): { name: string; signer: Uint8Array; chunks: number } {
  if (file.length < 12 || !file.subarray(0, 8).equals(Buffer.from(MODEL_MAGIC))) throw new CodedError('BAD_MAGIC', 'not an iki model');
  let offset = 12;
  let name = '';
  let chunks = 0;
  for (;;) {
    if (offset + 8 > file.length) throw new CodedError('TRUNCATED', 'truncated');
    const type = file.toString('ascii', offset, offset + 4);
    const length = file.readUInt32LE(offset + 4);
    const payload = file.subarray(offset + 8, offset + 8 + length);
    if (payload.length !== length) throw new CodedError('TRUNCATED', 'truncated');
    if (type === 'HEAD') name = String((JSON.parse(payload.toString()) as { name: string }).name);
    if (type === 'SIGN') {
      const digest = createHash('sha256').update(file.subarray(0, offset)).digest();
      if (payload.length !== 101 || !digest.equals(payload.subarray(37, 69))) throw new CodedError('BAD_SIGNATURE', 'bad signature');
      if (offset + 8 + length !== file.length) throw new CodedError('TRAILING_BYTES', 'trailing bytes');
      return { name, signer: new Uint8Array(payload.subarray(1, 33)), chunks };
    }
    chunks += 1;
    offset += 8 + length;
  }
}

const SPKI_ED25519 = Buffer.from('302a300506032b6570032100', 'hex');

function weak(key: Uint8Array): void {
  if (key.every((b) => b === 0)) throw new CodedError('WEAK_KEY', 'low-order point');
}

/** The test-only crypto fake; `calls` records what was asked of it. */
/** The texture bound every fake master reports: one 64 x 32 texture. */
export const FAKE_TEXTURE_BOUND = { maxSidePx: 64, maxPixels: 64 * 32 } as const;

export function fakeCrypto(rootBytes: Uint8Array = new Uint8Array(32).fill(7)): LicenseCrypto & { calls: string[] } {
  const mac = (...parts: (string | Uint8Array)[]) => {
    const h = createHmac('sha256', rootBytes);
    for (const p of parts) h.update(p);
    return new Uint8Array(h.digest());
  };
  const seal = (context: string, recipient: Uint8Array): SealedKey => {
    weak(recipient);
    return { ephemeralPublicKey: mac('eph', context, recipient), nonce: mac('nonce', context).slice(0, 24),
      ciphertext: new Uint8Array([...mac('ct', context), ...mac('tag', context).slice(0, 16)]) };
  };
  const calls: string[] = [];
  return {
    calls,
    servicePublicKeys: () => ({ x25519: mac('x25519'), licenseSigning: mac('sign'), certificateIssuer: mac('cert') }),
    async verifyMasterStream(source): Promise<MasterSummary> {
      calls.push('verifyMasterStream');
      const parsed = parse(await collect(source));
      return { name: parsed.name, signerPublicKey: parsed.signer, signer: { kind: 'device' }, certifiedAccount: null, createdMs: 0,
        entries: parsed.chunks, textures: 1, decodedBytes: 0, textureBound: FAKE_TEXTURE_BOUND };
    },
    async *streamLicenseCopy(source: AsyncIterable<Uint8Array>, master: MasterRef, license: LicenseObject, service: string) {
      calls.push('streamLicenseCopy');
      yield new Uint8Array(Buffer.from(`${JSON.stringify({ master: master.id, license, service })}\n`));
      for await (const part of source) yield part;
    },
    async sealLicenseKey(master, licenseId, recipient) {
      calls.push('sealLicenseKey');
      return seal(`license:${master.id}:${licenseId}`, recipient);
    },
    async identify(_master, image, _type, _masterSource, { bound }): Promise<IdentifyResult> {
      calls.push(`identify ${bound.maxSidePx} ${bound.maxPixels}`);
      const match = /LIC:([0-9a-f]{16})/.exec(Buffer.from(image).toString('latin1'));
      return match?.[1] === undefined
        ? { found: false, confidence: 0.1, method: 'blind', reason: 'no_matching_texture', texturesTried: 0, match: 'decoded', mixed: false, candidates: [] }
        : { found: true, licenseId: match[1], confidence: 0.97, method: 'blind', texturesTried: 0, match: 'decoded', mixed: false, candidates: [] };
    },
    async wrapAccountSlot(accountId, sealed) {
      weak(sealed.ephemeralPublicKey);
      return new Uint8Array([1, ...mac('slot', accountId, sealed.ciphertext)]);
    },
    async unwrapAccountSlot(accountId, blob, recipient) {
      if (blob[0] !== 1 || blob.length !== 33) throw new CodedError('DECRYPT_FAILED', 'decrypt failed');
      return seal(`unwrap:${accountId}`, recipient);
    },
    async certifySigningKey(accountId, subject, proof, issuedMs, expiresMs) {
      const key = createPublicKey({ key: Buffer.concat([SPKI_ED25519, subject]), format: 'der', type: 'spki' });
      const message = Buffer.concat([Buffer.from('IKI-KEY-REGISTRATION-V1\0'), Buffer.from(accountId)]);
      if (!verify(null, message, key, proof)) throw new CodedError('BAD_SIGNATURE', 'bad proof');
      return new Uint8Array(Buffer.from(JSON.stringify({ accountId, subject: Buffer.from(subject).toString('hex'), issuedMs, expiresMs })));
    },
  };
}

/** The fake crypto whose copies stop after their first piece while `hold` is on, or fail to start. */
export function gatedCrypto() {
  const base = fakeCrypto();
  const copy = base.streamLicenseCopy.bind(base);
  let gate: Promise<void> = Promise.resolve();
  let open = () => {};
  const control = {
    failStart: false,
    hold() { gate = new Promise((resolve) => { open = resolve; }); },
    release() { open(); },
  };
  const crypto = Object.assign(base, {
    streamLicenseCopy(...args: Parameters<typeof copy>): AsyncIterable<Uint8Array> {
      if (control.failStart) {
        return (async function* failing() {
          yield* [];
          throw Object.assign(new Error('master mismatch'), { code: 'MASTER_MISMATCH' });
        })();
      }
      return (async function* gated() {
        let first = true;
        for await (const piece of copy(...args)) {
          yield piece;
          if (first) await gate;
          first = false;
        }
      })();
    },
  });
  return { crypto, control };
}
