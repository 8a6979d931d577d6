/**
 * The real `LicenseCrypto` (services/crypto-port.ts) over `@iki/core`'s `ServiceKeys`, which
 * runs `crates/iki-license` in WebAssembly (SPEC "Master and license copy", behaviour rules 1
 * to 7; docs/format.md §7.2, §8, §9). Nothing here touches a key: the root secret is handed to
 * WASM once, at construction, and this file's copy of it is zero-filled at once; every
 * service key is derived and kept inside WASM.
 *
 * Streaming: the upload check and the license copy read their source piece by piece
 * (`@iki/core` feeds 64 KiB pieces to WASM), so memory stays around one container chunk
 * whatever the file's size. The copy is an async generator: it reads the next piece of the
 * master only when the consumer asks for more, which carries the HTTP response's
 * back-pressure back to the blob store. When the master fails its check at the end (the
 * signature, or the SHA-256 against the record), the generator throws after the bytes sent so
 * far, and the route aborts the response (the partial copy has no SIGN).
 *
 * Failures are `IkiError`s whose `code` is a docs/format.md §11 or iki-license code; the
 * services turn them into HTTP answers with `fromPortError`.
 */
import { IkiError, IMAGE_BOUND_CEILING, loadWasm, ServiceKeys, type MasterSummary as CoreSummary, type SealedKey as CoreSealed } from '@iki/core';
import type { RootSecret } from '../secrets.js';
import type {
  IdentifyOptions, IdentifyResult, ImageBound, ImageMediaType, LicenseCrypto, LicenseObject, MasterRef, MasterSummary,
  SealedKey, VerifyOptions,
} from './crypto-port.js';

const toPort = (sealed: CoreSealed): SealedKey => ({
  ephemeralPublicKey: sealed.ephemeral, nonce: sealed.nonce, ciphertext: sealed.sealed,
});

const fromPort = (sealed: SealedKey): CoreSealed => ({
  ephemeral: sealed.ephemeralPublicKey, nonce: sealed.nonce, sealed: sealed.ciphertext,
});

function summaryView(summary: CoreSummary): MasterSummary {
  return {
    name: summary.name,
    signerPublicKey: summary.signerPublicKey,
    signer: summary.signer as unknown as Record<string, unknown>,
    certifiedAccount: summary.certifiedAccount,
    createdMs: summary.createdMs,
    entries: summary.entries.length,
    textures: summary.textures.length,
    decodedBytes: summary.entries.reduce((sum, entry) => sum + entry.size, 0),
    textureBound: textureBound(summary.textures),
  };
}

/** The longest side and the largest area among a master's textures (0, 0 without any). */
export function textureBound(textures: readonly { width: number; height: number }[]): ImageBound {
  return textures.reduce((bound, t) => ({
    maxSidePx: Math.max(bound.maxSidePx, t.width, t.height),
    maxPixels: Math.max(bound.maxPixels, t.width * t.height),
  }), { maxSidePx: 0, maxPixels: 0 });
}

/** The port over one `ServiceKeys`; `free()` releases the keys (tests, shutdown). */
export class WasmLicenseCrypto implements LicenseCrypto {
  constructor(private readonly keys: ServiceKeys) {}

  servicePublicKeys() {
    return {
      x25519: this.keys.x25519PublicKey,
      licenseSigning: this.keys.licenseSigningPublicKey,
      certificateIssuer: this.keys.certificatePublicKey,
    };
  }

  async verifyMasterStream(source: AsyncIterable<Uint8Array>, options: VerifyOptions = {}): Promise<MasterSummary> {
    return summaryView(await this.keys.verifyMaster(source, options));
  }

  streamLicenseCopy(source: AsyncIterable<Uint8Array>, master: MasterRef, license: LicenseObject,
    service: string): AsyncIterable<Uint8Array> {
    if (service !== this.keys.serviceId) {
      // The service id is fixed when the keys are derived; a different one is a wiring bug.
      throw new IkiError('INVALID_STATE', 'license copies are signed for the service the keys were made for');
    }
    return this.keys.copyLicense(source, master, {
      id: license.id, licensee: license.licensee, licenseeName: license.licenseeName,
      seller: license.seller, issuedAt: license.issuedAt,
    });
  }

  async sealLicenseKey(master: MasterRef, licenseId: string, recipientPublicKey: Uint8Array): Promise<SealedKey> {
    return toPort(this.keys.sealLicenseKey(master, licenseId, recipientPublicKey));
  }

  async identify(master: MasterRef, image: Uint8Array, _mediaType: ImageMediaType,
    masterSource: () => AsyncIterable<Uint8Array>, options: IdentifyOptions): Promise<IdentifyResult> {
    // The decoder reads the format from the bytes; the declared media type was checked by
    // the route and is not trusted further.
    // The decoder's own ceiling caps whatever bound the service asks for.
    const bound = {
      maxSidePx: Math.min(options.bound.maxSidePx, IMAGE_BOUND_CEILING.maxSidePx),
      maxPixels: Math.min(options.bound.maxPixels, IMAGE_BOUND_CEILING.maxPixels),
    };
    const found = await this.keys.identifyLeak(master, image, masterSource,
      { budgetMs: options.budgetMs, bound, issued: options.issued });
    const facts = {
      confidence: found.confidence, method: found.method, texturesTried: found.texturesTried,
      match: found.match, mixed: found.mixed, candidates: found.candidates,
      ...(found.texture === undefined ? {} : { texture: found.texture }),
    };
    if (found.found && found.licenseId !== undefined) return { found: true, licenseId: found.licenseId, ...facts };
    return { found: false, reason: found.reason ?? 'no_matching_texture', ...facts,
      ...(found.capacity === undefined ? {} : { capacity: found.capacity }) };
  }

  async wrapAccountSlot(accountId: string, sealedContentKey: SealedKey): Promise<Uint8Array> {
    return this.keys.createAccountBlob(accountId, fromPort(sealedContentKey));
  }

  async unwrapAccountSlot(accountId: string, blob: Uint8Array, recipientPublicKey: Uint8Array): Promise<SealedKey> {
    return toPort(this.keys.unwrapAccountBlob(accountId, blob, recipientPublicKey));
  }

  async certifySigningKey(accountId: string, subjectPublicKey: Uint8Array, proof: Uint8Array,
    issuedMs: number, expiresMs: number): Promise<Uint8Array> {
    return this.keys.certifyRegisteredKey(subjectPublicKey, proof, accountId, issuedMs, expiresMs);
  }

  /** Releases the WASM handle; its keys are zeroized. */
  free(): void {
    this.keys.free();
  }
}

/**
 * The default crypto factory of `serve()`: loads the WebAssembly module (once per process)
 * and derives the service keys for `service` (the public base URL, written into license slots
 * and the signer JSON of license copies).
 */
export async function wasmCrypto(root: RootSecret, service: string): Promise<WasmLicenseCrypto> {
  await loadWasm();
  const bytes = root.expose();
  try {
    return new WasmLicenseCrypto(ServiceKeys.fromRoot(bytes, service));
  } finally {
    bytes.fill(0);
  }
}
