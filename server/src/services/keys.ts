/**
 * The key service (SPEC "What the service does" 4, behaviour rule 7, docs/format.md §7.2,
 * §8.2-§8.4): the service's public keys, device signing keys registered to accounts with their
 * certificates, revocation and public status look-up, and wrapping and unwrapping account
 * slots for the account they name.
 *
 * Registration requires a verified e-mail address (a certificate attributes files to the
 * account) and proof of possession: a signature by the device key over
 * `"IKI-KEY-REGISTRATION-V1" || 0x00 || accountId`, checked by the crypto port, so nobody can
 * register someone else's public key to their own account or block its owner from doing so.
 */
import { ApiError, fromPortError } from '../errors.js';
import type { Repository, SigningKey } from '../storage/repository.js';
import type { LicenseCrypto, SealedKey } from './crypto-port.js';

/** Certificates are valid for a year from registration; revocation is checked online. */
export const CERTIFICATE_VALIDITY_MS = 365 * 24 * 3600 * 1000;

/** Public status of a signing key. */
export interface SigningKeyView {
  publicKey: string;
  accountId: string;
  name: string;
  status: 'active' | 'revoked';
  createdAt: string;
  revokedAt: string | null;
}

/** The status anyone may read: the owner's view without the device name. */
export type PublicSigningKeyView = Omit<SigningKeyView, 'name'>;

/** Dependencies of the key service. */
export interface KeyDeps {
  repo: Repository;
  crypto: LicenseCrypto;
  now: () => Date;
}

const b64 = (bytes: Uint8Array): string => Buffer.from(bytes).toString('base64url');

/** The view of a stored key. */
export function signingKeyView(key: SigningKey): SigningKeyView {
  return {
    publicKey: key.publicKey, accountId: key.accountId, name: key.name,
    status: key.revokedAt === undefined ? 'active' : 'revoked',
    createdAt: key.createdAt.toISOString(), revokedAt: key.revokedAt?.toISOString() ?? null,
  };
}

const port = <T>(p: Promise<T>): Promise<T> => p.catch((err: unknown) => { throw fromPortError(err); });

/** Service keys, signing keys and account slots. */
export class KeyService {
  constructor(private readonly deps: KeyDeps) {}

  /** The service's public keys, base64url. */
  servicePublicKeys(): { x25519PublicKey: string; licenseSigningPublicKey: string; certificatePublicKey: string } {
    const keys = this.deps.crypto.servicePublicKeys();
    return {
      x25519PublicKey: b64(keys.x25519), licenseSigningPublicKey: b64(keys.licenseSigning),
      certificatePublicKey: b64(keys.certificateIssuer),
    };
  }

  /** Registers (or re-certifies) a device key of the caller and returns its certificate. */
  async register(callerId: string, publicKey: Uint8Array, proof: Uint8Array, name: string):
  Promise<{ created: boolean; key: SigningKeyView; certificate: string }> {
    const { repo, crypto, now } = this.deps;
    const account = await repo.findAccountById(callerId);
    if (account === undefined) throw new ApiError('UNAUTHENTICATED', 'invalid or expired access token');
    if (!account.emailVerified) {
      throw new ApiError('EMAIL_NOT_VERIFIED', 'verify your e-mail address before registering a signing key');
    }
    const encoded = b64(publicKey);
    this.refuseConflict(callerId, await repo.findSigningKey(encoded));
    const issued = now();
    const certificate = await port(crypto.certifySigningKey(callerId, publicKey, proof,
      issued.getTime(), issued.getTime() + CERTIFICATE_VALIDITY_MS));
    const outcome = await repo.registerSigningKey({ publicKey: encoded, accountId: callerId, name, createdAt: issued });
    const stored = await repo.findSigningKey(encoded);
    this.refuseConflict(callerId, outcome === 'taken' || outcome === 'revoked' ? stored : undefined);
    if (stored === undefined) throw new Error('signing key vanished after registration');
    return { created: outcome === 'created', key: signingKeyView(stored), certificate: b64(certificate) };
  }

  /** The caller's signing keys, newest first. */
  async list(callerId: string): Promise<SigningKeyView[]> {
    return (await this.deps.repo.listSigningKeys(callerId)).map(signingKeyView);
  }

  /** Revokes one of the caller's keys (idempotent). */
  async revoke(callerId: string, publicKey: string): Promise<SigningKeyView> {
    const key = await this.deps.repo.revokeSigningKey(publicKey, callerId, this.deps.now());
    if (key === undefined) throw new ApiError('SIGNING_KEY_NOT_FOUND', 'no such signing key of yours');
    return signingKeyView(key);
  }

  /**
   * Public status of any registered key, without the device name its owner gave it (issue 15
   * item 15: anyone may look a key up, and "Ada's work laptop" is the owner's business).
   */
  async status(publicKey: string): Promise<PublicSigningKeyView> {
    const key = await this.deps.repo.findSigningKey(publicKey);
    if (key === undefined) throw new ApiError('SIGNING_KEY_NOT_FOUND', 'this key is not registered');
    const { name: _name, ...view } = signingKeyView(key);
    return view;
  }

  /** Makes an account-slot blob for the caller from a content key sealed to the service. */
  async wrap(callerId: string, sealed: SealedKey): Promise<string> {
    return b64(await port(this.deps.crypto.wrapAccountSlot(callerId, sealed)));
  }

  /** Opens an account slot for the account it names, and only for that account, signed in. */
  async unwrap(callerId: string, accountId: string, blob: Uint8Array, publicKey: Uint8Array): Promise<SealedKey> {
    if (accountId !== callerId) {
      throw new ApiError('FORBIDDEN', 'an account slot opens only for the account it names');
    }
    return port(this.deps.crypto.unwrapAccountSlot(accountId, blob, publicKey));
  }

  private refuseConflict(callerId: string, key: SigningKey | undefined): void {
    if (key === undefined) return;
    if (key.accountId !== callerId) {
      throw new ApiError('SIGNING_KEY_TAKEN', 'this key is registered to another account');
    }
    if (key.revokedAt !== undefined) {
      throw new ApiError('SIGNING_KEY_REVOKED', 'this key was revoked and cannot be registered again');
    }
  }
}
