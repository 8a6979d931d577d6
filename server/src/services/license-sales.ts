/**
 * The seller's side of licenses (SPEC "States and transitions", issue 26 items 2 and 3):
 * creation by the master's seller, idempotent under an `Idempotency-Key`, with the seller's
 * reference and an optional expiry; the seller's listing with its filters and pages; and the
 * lifecycle: suspend and reinstate (reversible) and revoke (final).
 *
 * Revocation is final (SPEC leaves restoring a revoked license open): a revoked license is
 * neither suspended nor reinstated (`LICENSE_STATE_CONFLICT`), because a buyer told "revoked"
 * and a leak traced to a revoked license must stay so; a seller who wants a pause suspends.
 * Every change is written to the license's history with the seller as its actor and, when it
 * came through an API key, that key's id (`details.apiKeyId`).
 *
 * Idempotency (as Stripe's `Idempotency-Key`): the key is the seller's, any 1 to 255 visible
 * ASCII characters. The same key with the same request (master, buyer, reference, expiry)
 * answers the license it made, however often and from whichever instance; with another request
 * it is refused (`IDEMPOTENCY_KEY_REUSED`). A request that failed made nothing and keeps
 * nothing, so it can be retried with its key. Keys are kept as long as their license.
 */
import { createHash } from 'node:crypto';
import { ApiError } from '../errors.js';
import type { Account, License, Master, Repository } from '../storage/repository.js';
import type { Actor, LicenseQuery, LicenseState } from '../storage/seller-records.js';
import { newLicenseId } from './ids.js';
import type { LicenseView, LicenseViews } from './license-view.js';

/** Names the buyer of a new license. */
export type BuyerRef = { accountId: string } | { email: string };

/** What a license creation asks for. */
export type LicenseRequest = BuyerRef & { externalRef?: string; expiresAt?: string };

/** The answer of a creation: `replayed` when an idempotency key returned an earlier license. */
export interface Created {
  license: LicenseView;
  replayed: boolean;
}

/** The seller's listing filters (`GET /api/seller/licenses`). */
export interface SellerLicenseFilter {
  masterId?: string | undefined;
  buyer?: string | undefined;
  state?: LicenseState | undefined;
  externalRef?: string | undefined;
  limit: number;
  after?: { issuedAt: Date; id: string } | undefined;
}

/** Dependencies of the seller's license operations. */
export interface LicenseSalesDeps {
  repo: Repository;
  now: () => Date;
  views: LicenseViews;
  /** License creations per seller per hour (`IKI_LICENSES_PER_SELLER_PER_HOUR`); unlimited when absent. */
  licensesPerSellerPerHour?: number | undefined;
}

const notFound = (): ApiError => new ApiError('LICENSE_NOT_FOUND', 'no such license');
const masterNotFound = (): ApiError => new ApiError('MASTER_NOT_FOUND', 'no such master');

/** The SHA-256 of what a creation asks for, in one fixed order, to recognise the same request again. */
export function requestHash(masterId: string, request: LicenseRequest): string {
  const canonical = JSON.stringify([
    masterId, 'accountId' in request ? request.accountId : null, 'email' in request ? request.email.trim().toLowerCase() : null,
    request.externalRef ?? null, request.expiresAt === undefined ? null : new Date(request.expiresAt).toISOString(),
  ]);
  return createHash('sha256').update(canonical, 'utf8').digest('hex');
}

/** The expiry of a creation request: a valid time after `now`, else `VALIDATION_FAILED`. */
function expiryOf(text: string | undefined, now: Date): Date | undefined {
  if (text === undefined) return undefined;
  const at = new Date(text);
  if (Number.isNaN(at.getTime()) || at.getTime() <= now.getTime()) {
    throw new ApiError('VALIDATION_FAILED', 'expiresAt must be a valid time in the future',
      { errors: [{ path: '/expiresAt', message: 'must be a valid date-time after now' }] });
  }
  return at;
}

/** Creation, listing and the lifecycle of licenses, for their seller. */
export class LicenseSales {
  constructor(private readonly deps: LicenseSalesDeps) {}

  /** Creates a license for a buyer (the master's seller only), idempotently under `idempotencyKey`. */
  async create(actor: Actor, masterId: string, request: LicenseRequest, idempotencyKey?: string): Promise<Created> {
    const { repo, now } = this.deps;
    if (('accountId' in request) === ('email' in request)) {
      throw new ApiError('VALIDATION_FAILED', 'name the buyer by accountId or by email, exactly one of them',
        { errors: [{ path: '/', message: 'must have exactly one of accountId and email' }] });
    }
    const hash = requestHash(masterId, request);
    if (idempotencyKey !== undefined) {
      const earlier = await repo.findIdempotentLicense(actor.accountId, idempotencyKey);
      if (earlier !== undefined) return this.replay(actor, earlier.licenseId, earlier.requestHash === hash);
    }
    const master = await repo.findMaster(masterId);
    if (master === undefined || master.sellerId !== actor.accountId) throw masterNotFound();
    if (master.archivedAt !== undefined) {
      throw new ApiError('MASTER_ARCHIVED', 'this master is archived, so it takes no new license; restore it first');
    }
    const issuedAt = now();
    const expiresAt = expiryOf(request.expiresAt, issuedAt);
    await this.admitCreation(actor.accountId);
    const licensee = 'accountId' in request ? await repo.findAccountById(request.accountId) : await this.byEmail(request.email);
    if (licensee === undefined) throw new ApiError('ACCOUNT_NOT_FOUND', 'no account with this id or verified e-mail address');
    const idempotency = idempotencyKey === undefined ? undefined : { sellerId: actor.accountId, key: idempotencyKey, requestHash: hash };
    for (;;) {
      // 64 random bits: a collision is astronomically unlikely, but it must not overwrite.
      const license = { id: newLicenseId(), masterId, licenseeId: licensee.id, licenseeName: licensee.name, issuedAt,
        externalRef: request.externalRef, expiresAt, ...('email' in request ? { licenseeEmail: licensee.email } : {}) };
      const outcome = await repo.createLicense({ license, actor, idempotency });
      if (outcome.kind === 'created') {
        return { license: await this.deps.views.view({ ...license, revokedAt: undefined, releaseCount: 0 }, master, actor.accountId), replayed: false };
      }
      if (outcome.kind === 'replayed') return this.replay(actor, outcome.licenseId, true);
      if (outcome.kind === 'key_conflict') return this.replay(actor, '', false);
    }
  }

  /** The seller's licenses matching `filter`, newest first. */
  async list(sellerId: string, filter: SellerLicenseFilter): Promise<LicenseView[]> {
    const query: LicenseQuery = { sellerId, now: this.deps.now(), ...filter,
      buyer: filter.buyer === undefined ? undefined : filter.buyer.trim().toLowerCase() };
    return this.deps.views.viewAll(await this.deps.repo.queryLicenses(query), sellerId);
  }

  /**
   * Revokes a license (the master's seller only, also when licensed to the seller's own
   * account; idempotent: the first revocation time stays). Final, also for a suspended license.
   */
  async revoke(actor: Actor, licenseId: string, reason: string | undefined): Promise<LicenseView> {
    const master = await this.sellersMaster(actor, licenseId);
    const license = await this.deps.repo.revokeLicense(licenseId, actor.accountId, this.deps.now(), reason, actor.apiKeyId);
    if (license === undefined) throw notFound();
    return this.deps.views.view(license, master, actor.accountId);
  }

  /**
   * Suspends (`suspend` true) or reinstates a license of the seller's; idempotent (the first
   * suspension time stays); a revoked license is refused (`LICENSE_STATE_CONFLICT`).
   */
  async setSuspended(actor: Actor, licenseId: string, suspend: boolean, reason: string | undefined): Promise<LicenseView> {
    const master = await this.sellersMaster(actor, licenseId);
    const outcome = await this.deps.repo.setSuspended({ licenseId, suspend, actor, now: this.deps.now(), reason });
    if (outcome.kind === 'not_found') throw notFound();
    if (outcome.kind === 'revoked') {
      throw new ApiError('LICENSE_STATE_CONFLICT', 'the license is revoked, and revocation is final', { state: 'revoked' });
    }
    return this.deps.views.view(outcome.license, master, actor.accountId);
  }

  /** The master of a license the actor sold; `FORBIDDEN` for its licensee, `LICENSE_NOT_FOUND` for anyone else. */
  private async sellersMaster(actor: Actor, licenseId: string): Promise<Master> {
    const found = await this.deps.repo.findLicenseAndMaster(licenseId);
    if (found === undefined) throw notFound();
    if (found.master.sellerId === actor.accountId) return found.master;
    if (found.license.licenseeId === actor.accountId) throw new ApiError('FORBIDDEN', 'only the seller may change a license');
    throw notFound();
  }

  /** The answer of a used idempotency key: its license when the request is the same, else a conflict. */
  private async replay(actor: Actor, licenseId: string, same: boolean): Promise<Created> {
    if (!same) {
      throw new ApiError('IDEMPOTENCY_KEY_REUSED', 'this Idempotency-Key was used for another request; use a new key for a new license');
    }
    const found = await this.deps.repo.findLicenseAndMaster(licenseId);
    if (found === undefined) throw notFound();
    return { license: await this.deps.views.view(found.license, found.master, actor.accountId), replayed: true };
  }

  /**
   * Counts a creation against the seller's hourly limit (issue 15 item 1: each creation by
   * e-mail tells whether an address has a verified account); `LICENSE_CREATION_THROTTLED`.
   */
  private async admitCreation(sellerId: string): Promise<void> {
    const limit = this.deps.licensesPerSellerPerHour;
    if (limit === undefined) return;
    const at = this.deps.now();
    const outcome = await this.deps.repo.tryRecordLicenseCreation({
      addressHash: createHash('sha256').update(sellerId, 'utf8').digest('hex'), clientIp: '-', now: at,
      windowSeconds: 3600, perAddress: limit, perIp: Number.POSITIVE_INFINITY });
    if (outcome.kind === 'recorded') return;
    const retryAfterSeconds = Math.max(1, Math.ceil((outcome.retryAt.getTime() - at.getTime()) / 1000));
    throw new ApiError('LICENSE_CREATION_THROTTLED', `at most ${limit} licenses an hour; try again later`,
      { retryAfterSeconds, limit }, { 'Retry-After': String(retryAfterSeconds) });
  }

  /**
   * The one account whose verified address is `email` (issue 15 item 5): when a local and an
   * external account share it, licensing by e-mail is refused as ambiguous.
   */
  private async byEmail(emailInput: string): Promise<Account | undefined> {
    const found = await this.deps.repo.findVerifiedAccountsByEmail(emailInput.trim().toLowerCase());
    if (found.length > 1) {
      throw new ApiError('ACCOUNT_AMBIGUOUS', 'several accounts have this e-mail address; license the buyer by account id');
    }
    return found[0];
  }
}

/** Whether the license is past its expiry at `now` (the boundary itself is past). */
export const expired = (license: Pick<License, 'expiresAt'>, now: Date): boolean =>
  license.expiresAt !== undefined && license.expiresAt.getTime() <= now.getTime();
