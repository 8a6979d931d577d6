/**
 * Reads, from the container framing alone, what an upload's bytes say before the complete
 * check decrypts anything (docs/format.md §1 and §7): the magic, and SIGN's public key.
 *
 * SIGN is the file's last chunk, so its signer is known only once the whole body arrived, but
 * walking the chunk headers (type and length, each payload skipped unread) as the body streams
 * to its temporary blob costs nothing, and so the upload can refuse a master signed by a key
 * that is not the seller's before the complete check, the expensive pass (every chunk
 * decrypted, inflated and hashed). The key read here is a claim: the complete check verifies
 * the signature and the signer is checked again on its result. A wrong magic is refused at the
 * first bytes with the reader's own codes (§1: the other kind's magic is `WRONG_KIND`,
 * anything else `BAD_MAGIC`), so a body that is no master is not stored at all. Nothing else is
 * judged here: a framing that breaks off leaves the signer unknown and the complete check
 * gives the exact error.
 */
import { ApiError } from '../errors.js';

/** Magic of a protected model file, `.ikm` (§1). */
const MODEL_MAGIC = [0x89, 0x49, 0x4b, 0x4d, 0x0d, 0x0a, 0x1a, 0x0a] as const;
/** Magic of a project file, `.iki` (§1). */
const PROJECT_MAGIC = [0x89, 0x49, 0x4b, 0x49, 0x0d, 0x0a, 0x1a, 0x0a] as const;
/** Magic (8) + major (2) + minor (2). */
const PREAMBLE_BYTES = 12;
/** Type (4) + length (4). */
const CHUNK_HEADER_BYTES = 8;
/** SIGN's algorithm byte and public key (§7). */
const SIGN_PREFIX_BYTES = 1 + 32;
/** The shortest SIGN payload: algorithm, key, info_length, signature (§7). */
const MIN_SIGN_PAYLOAD_BYTES = 1 + 32 + 4 + 64;
const ED25519 = 1;

type Region = 'preamble' | 'header' | 'sign' | 'done';

const matches = (bytes: Uint8Array, magic: readonly number[]): boolean => magic.every((b, i) => bytes[i] === b);

/** Follows one upload's framing; `push` every piece in order. */
export class UploadScan {
  /** Bytes pushed so far. */
  private seen = 0;
  /** Where the region being read starts, from the start of the file. */
  private start = 0;
  private region: Region = 'preamble';
  private want = PREAMBLE_BYTES;
  private filled = 0;
  private readonly buffer = new Uint8Array(SIGN_PREFIX_BYTES);
  private signer: Uint8Array | undefined;

  /** The Ed25519 public key SIGN names, once its first 33 bytes went by (unverified). */
  get signerPublicKey(): Uint8Array | undefined {
    return this.signer;
  }

  /** Follows `bytes`; throws `BAD_MAGIC` or `WRONG_KIND` as soon as the magic is wrong. */
  push(bytes: Uint8Array): void {
    let at = 0;
    while (this.region !== 'done' && at < bytes.length) {
      const offset = this.seen + at;
      if (offset < this.start) {
        at += Math.min(bytes.length - at, this.start - offset);
        continue;
      }
      const take = Math.min(this.want - this.filled, bytes.length - at);
      this.buffer.set(bytes.subarray(at, at + take), this.filled);
      this.filled += take;
      at += take;
      if (this.filled === this.want) this.complete();
    }
    this.seen += bytes.length;
  }

  private complete(): void {
    const region = this.buffer.subarray(0, this.want);
    const end = this.start + this.want;
    if (this.region === 'preamble') {
      if (matches(region, PROJECT_MAGIC)) throw new ApiError('WRONG_KIND', 'a project file (.iki) is not a master');
      if (!matches(region, MODEL_MAGIC)) throw new ApiError('BAD_MAGIC', 'the body is not an iki model file');
      this.next('header', end, CHUNK_HEADER_BYTES);
    } else if (this.region === 'header') {
      const type = String.fromCharCode(...region.subarray(0, 4));
      const length = new DataView(region.buffer, region.byteOffset, 8).getUint32(4, true);
      if (type !== 'SIGN') this.next('header', end + length, CHUNK_HEADER_BYTES);
      else if (length >= MIN_SIGN_PAYLOAD_BYTES) this.next('sign', end, SIGN_PREFIX_BYTES);
      else this.region = 'done';
    } else {
      if (region[0] === ED25519) this.signer = region.slice(1, SIGN_PREFIX_BYTES);
      this.region = 'done';
    }
  }

  private next(region: Region, start: number, want: number): void {
    this.region = region;
    this.start = start;
    this.want = want;
    this.filled = 0;
  }
}
