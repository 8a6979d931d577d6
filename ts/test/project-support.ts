// Shared fixtures of the project tests: a key service in-process over the real WASM
// `ServiceKeys` (the same certificates, account slots and revocation rules as the server, no
// HTTP), WebCrypto Ed25519 signers like a browser's, and a small project.
import { toBase64Url } from '../src/keys.js';
import { ServiceError, type KeyServiceApi, type SigningKeyStatus } from '../src/key-service.js';
import { cryptoKeySigner, type ExternalSigner, type SignerClaim } from '../src/signer.js';
import { ServiceKeys } from '../src/service.js';
import type { ProjectAsset } from '../src/project/index.js';
import { sample } from './container-support.js';

/** The key service's shared state: keys, registered signing keys, and whether it answers. */
export class FakeKeyServer {
  readonly keys: ServiceKeys;
  readonly signing = new Map<string, SigningKeyStatus>();
  offline = false;
  now = Date.now();

  constructor(root = new Uint8Array(32).fill(0x3c)) {
    this.keys = ServiceKeys.fromRoot(root, 'https://iki.test');
  }

  /** The client of one account (`undefined`: signed out). */
  client(accountId?: string, email?: string): KeyServiceApi {
    const check = () => {
      if (this.offline) throw new ServiceError('SERVICE_UNREACHABLE', 'the service could not be reached', 0);
    };
    const caller = () => {
      check();
      if (accountId === undefined) throw new ServiceError('UNAUTHENTICATED', 'an access token is required', 401);
      return accountId;
    };
    return {
      serviceKeys: async () => {
        check();
        return { service: 'https://iki.test', x25519PublicKey: this.keys.x25519PublicKey,
          certificatePublicKey: this.keys.certificatePublicKey, licenseSigningPublicKey: this.keys.licenseSigningPublicKey };
      },
      me: async () => ({ accountId: caller(), ...(email === undefined ? {} : { email }) }),
      registerKey: async (publicKey, proof, name) => {
        const account = caller();
        const key = toBase64Url(publicKey);
        const known = this.signing.get(key);
        if (known !== undefined && known.accountId !== account) throw new ServiceError('SIGNING_KEY_TAKEN', 'taken', 409);
        if (known?.status === 'revoked') throw new ServiceError('SIGNING_KEY_REVOKED', 'revoked', 409);
        const certificate = this.keys.certifyRegisteredKey(publicKey, proof, account, this.now, this.now + 365 * 86_400_000);
        const record: SigningKeyStatus = { publicKey: key, accountId: account, name: name ?? '', status: 'active',
          createdAt: new Date(this.now).toISOString(), revokedAt: null };
        this.signing.set(key, known ?? record);
        return { certificate: toBase64Url(certificate), key: known ?? record };
      },
      keyStatus: async (publicKey) => {
        check();
        return this.signing.get(toBase64Url(publicKey));
      },
      listKeys: async () => {
        const account = caller();
        return [...this.signing.values()].filter((k) => k.accountId === account);
      },
      revokeKey: async (publicKey) => {
        const account = caller();
        const key = typeof publicKey === 'string' ? publicKey : toBase64Url(publicKey);
        const known = this.signing.get(key);
        if (known === undefined || known.accountId !== account) throw new ServiceError('SIGNING_KEY_NOT_FOUND', 'no such key of yours', 404);
        known.status = 'revoked';
        known.revokedAt = new Date(this.now).toISOString();
        return known;
      },
      wrap: async (sealedKey) => ({ accountId: caller(), blob: this.keys.createAccountBlob(caller(), sealedKey) }),
      unwrap: async (account, blob, publicKey) => {
        if (account !== caller()) throw new ServiceError('FORBIDDEN', 'an account slot opens only for the account it names', 403);
        return this.keys.unwrapAccountBlob(account, blob, publicKey);
      },
    };
  }
}

/** A fresh non-extractable WebCrypto Ed25519 key, as a browser makes it. */
export async function browserSigner(claim?: SignerClaim): Promise<{ signer: ExternalSigner; pair: CryptoKeyPair }> {
  const pair = await crypto.subtle.generateKey({ name: 'Ed25519' }, false, ['sign', 'verify']) as CryptoKeyPair;
  return { signer: await cryptoKeySigner(pair, claim), pair };
}

/** A small project: a snapshot with markup in its strings and three assets, two of them equal. */
export function smallProject(): { snapshot: Record<string, unknown>; assets: ProjectAsset[]; name: string; canvas: { width: number; height: number } } {
  const png = sample(70_000, 7, true);
  png.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return {
    snapshot: { name: 'Poster', canvas: { width: 640, height: 480 }, layers: [{ text: '<img src=x onerror=alert(1)>', asset: 'images/hero.png' }] },
    assets: [
      { name: 'images/hero.png', data: new Blob([png as BlobPart]) },
      { name: 'copy of hero.png', data: png, type: 'image/png' },
      { name: 'notes/readme.txt', data: new TextEncoder().encode('plain text <b>not markup</b>\n') },
    ],
    name: 'Poster',
    canvas: { width: 640, height: 480 },
  };
}

/** Everything in a Blob, as bytes. */
export async function bytesOf(blob: Blob): Promise<Uint8Array> {
  return new Uint8Array(await blob.arrayBuffer());
}
