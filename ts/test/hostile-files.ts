// Hostile and damaged containers for the refusal tests, cut from the checked-in vectors of
// testdata/container (docs/format.md sections 1 to 3). Nothing here re-signs a file: each
// refusal under test happens before the signature is checked.
import { createHash, createPrivateKey, sign } from 'node:crypto';
import { readFileSync } from 'node:fs';

const DIR = new URL('../../testdata/container/', import.meta.url);

/** The container bytes of the vector `name` (after its text header). */
export function vectorBytes(name: string): Uint8Array {
  const file = readFileSync(new URL(`${name}.ikv`, DIR));
  const split = file.indexOf('\n---\n');
  if (split < 0) throw new Error(`${name}: no --- line`);
  return new Uint8Array(file.subarray(split + 5));
}

/** A file as its 12-byte preamble and its chunks. */
export interface Chunks {
  preamble: Uint8Array;
  chunks: { type: string; payload: Uint8Array }[];
}

export function splitChunks(bytes: Uint8Array): Chunks {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const chunks: Chunks['chunks'] = [];
  for (let at = 12; at < bytes.length;) {
    const length = view.getUint32(at + 4, true);
    chunks.push({ type: Buffer.from(bytes.subarray(at, at + 4)).toString('latin1'), payload: bytes.slice(at + 8, at + 8 + length) });
    at += 8 + length;
  }
  return { preamble: bytes.slice(0, 12), chunks };
}

export function joinChunks({ preamble, chunks }: Chunks): Uint8Array {
  const parts: Uint8Array[] = [preamble];
  for (const { type, payload } of chunks) {
    const head = new Uint8Array(8);
    head.set(Buffer.from(type, 'latin1'));
    new DataView(head.buffer).setUint32(4, payload.length, true);
    parts.push(head, payload);
  }
  return new Uint8Array(Buffer.concat(parts));
}

/** The slots of a KEYS payload, each as type, length and body bytes. */
export function slotsOf(keys: Uint8Array): Uint8Array[] {
  const slots: Uint8Array[] = [];
  for (let at = 2; at < keys.length;) {
    const end = at + 3 + (keys[at + 1] as number) + 256 * (keys[at + 2] as number);
    slots.push(keys.slice(at, end));
    at = end;
  }
  return slots;
}

/** A KEYS payload of `slots`. */
export function keysOf(slots: Uint8Array[]): Uint8Array {
  const count = new Uint8Array(2);
  new DataView(count.buffer).setUint16(0, slots.length, true);
  return new Uint8Array(Buffer.concat([count, ...slots]));
}

/** A password slot (type, length, 101-byte body) with its Argon2id cost replaced. */
export function withCost(slot: Uint8Array, mKib: number, t: number): Uint8Array {
  const out = slot.slice();
  const view = new DataView(out.buffer, out.byteOffset, out.byteLength);
  view.setUint32(4, mKib, true);
  view.setUint32(8, t, true);
  return out;
}

/** `file` with its KEYS chunk (the second) holding `slots`. */
export function withSlots(file: Uint8Array, slots: Uint8Array[]): Uint8Array {
  const parts = splitChunks(file);
  (parts.chunks[1] as Chunks['chunks'][number]).payload = keysOf(slots);
  return joinChunks(parts);
}

/**
 * `file` signed again by the Ed25519 key of `seed` (docs/format.md section 7): the last 64
 * bytes, the signature over "IKIFMT-SIGNATURE-V1" || 0x00 || SHA-256(every byte before them).
 */
export function resign(file: Uint8Array, seed: Uint8Array): Uint8Array {
  const out = file.slice();
  const digest = createHash('sha256').update(out.subarray(0, out.length - 64)).digest();
  const der = Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), seed]);
  const key = createPrivateKey({ key: der, format: 'der', type: 'pkcs8' });
  out.set(sign(null, Buffer.concat([Buffer.from('IKIFMT-SIGNATURE-V1\0'), digest]), key), out.length - 64);
  return out;
}
