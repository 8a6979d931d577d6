/**
 * `@iki/core`: the typed TypeScript API over the iki WebAssembly module.
 * Await {@link loadWasm} once before using the synchronous functions (key
 * generation, watermark, images); the streaming functions load it themselves.
 *
 * One module per concept (STYLE.md "Layout"): containers, keys, watermark,
 * images, byte streams, errors and the generated codes and limits, and the
 * service and player sides of licensing. Project files (save, open with the signer's
 * verdict, legacy `.rigproj`) are `@iki/core/project`, which brings the ZIP reader.
 */
export * from './codes.js';
export * from './errors.js';
export * from './limits.js';
export { loadWasm, useHostSha256, wasmMemoryBytes, type IkiWasm, type WasmSource } from './wasm.js';
export { checkByteSource, collect, pieces, PIECE_BYTES, type ByteSource } from './streams.js';
export {
  ContentKey,
  SigningKey,
  X25519Identity,
  decodeKeyFile,
  encodeKeyFile,
  fromBase64Url,
  toBase64Url,
  type KeyFileKind,
} from './keys.js';
export {
  hashEntry,
  openContainer,
  readContainer,
  writeContainer,
  type EntryInfo,
  type Header,
  type Kind,
  type LicenseCopyOpener,
  type Manifest,
  type NewEntry,
  type Opened,
  type ReadEvent,
  type ReadOptions,
  type SignerInfo,
  type SlotInfo,
  type Unlock,
  type UnlockOption,
  type Verified,
  type WriteOptions,
} from './container.js';
export { DEFAULT_PASSWORD_COST, type PasswordCost, type Protection } from './container-write.js';
export {
  ChunkFeed, deflateChunk, inThreadDeflater, DEFAULT_DEFLATE_LEVEL, type ChunkDeflater, type DeflateChunkOptions, type DeflatedChunk,
} from './deflate-chunk.js';
export { Suspect, WatermarkKey, detectWatermark, embedWatermark, type Detection, type InformedDetection, type SuspectDetection } from './watermark.js';
export { matchLicenses, MAX_ISSUED_LICENSES, type LicenseCandidate, type LicenseMatch } from './license-match.js';
export { decodeImage, encodePng, type DecodedImage } from './image.js';
export * from './player.js';
export * from './service.js';
export * from './key-service.js';
export * from './signer.js';
export { entryPathProblem } from './entry-path.js';
export { signWebhook, verifyWebhookSignature, WEBHOOK_TOLERANCE_SECONDS, type WebhookVerdict } from './webhook-signature.js';
export { contentRange, resumableBody, ResumeRefused, totalSize, type OpenDownload, type ResumeOptions } from './resumable.js';
