/**
 * Licenses (SPEC "States and transitions", behaviour rules 2-6, "Authentication"): creation by
 * the master's seller, look-up and listings for seller and licensee, idempotent revocation by
 * the seller, the event history, the streamed license copy, the counted and rate-limited key
 * release, and identifying a leaked texture.
 *
 * Who may see a license: its seller and its licensee. Anyone else is told it does not exist
 * (`LICENSE_NOT_FOUND`), so license ids cannot be probed; a party calling an operation that
 * belongs to the other party gets `FORBIDDEN`. Revocation is the master's seller's, also when
 * the seller licensed their own account.
 *
 * Copies and identify are the expensive operations: a copy decrypts, watermarks and re-encrypts
 * the whole master, identify decodes an image. Both are admitted by the `UsageLimiter` first,
 * and identify decodes no image larger than the master's largest texture (issue 15 item 2).
 */
import { ApiError, fromPortError } from '../errors.js';
import {
  blobOf, type EventPage, type License, type LicenseEvent, type Master, type ReleaseOutcome, type Repository,
  type TextureBound,
} from '../storage/repository.js';
import type { IdentifyLimits, ReleaseLimits } from '../config.js';
import type { IdentifyResult, ImageBound, ImageMediaType, LicenseCrypto, SealedKey } from './crypto-port.js';
import { masterRef } from './masters.js';
import { LicenseRefs } from './license-refs.js';
import { expired, LicenseSales, type BuyerRef } from './license-sales.js';
import { LicenseViews, type LicenseView } from './license-view.js';
import type { UsageLimiter } from './usage-limits.js';
import { type CopyInfo, type CopyRange, licenseCopyEtag, type OpenCopy, safeFileName } from './license-copies.js';
import { openLicenseCopy } from './license-download.js';
import { deviceIdOf, hashAddress } from './activity-address.js';
import { memoized } from './memo.js';
import type { ClientMark, RefusalReason } from '../storage/activity-records.js';

export type { LicenseView, PartyView } from './license-view.js';
export type { BuyerRef } from './license-sales.js';

/** One event of a license's history. */
export interface EventView {
  eventId: string;
  at: string;
  kind: LicenseEvent['kind'];
  actorId: string;
  details: Record<string, unknown>;
}

/** A key release that was granted or refused by the limits. */
export type ReleaseResult =
  | { kind: 'granted'; sealed: SealedKey; outcome: Extract<ReleaseOutcome, { kind: 'granted' }> }
  | { kind: 'limited'; outcome: Extract<ReleaseOutcome, { kind: 'limited' }> };

/** An issued license's score against the leak, with the buyer's name when the license was issued. */
export type CandidateView = IdentifyResult['candidates'][number] & { licenseeName: string | null };

/** The answer of identify; "no mark" is a normal answer. */
export type IdentifyView =
  | (Omit<Extract<IdentifyResult, { found: false }>, 'candidates'> & { candidates: CandidateView[] })
  | (Omit<Extract<IdentifyResult, { found: true }>, 'candidates'> & { candidates: CandidateView[]; license: LicenseView | null });

/** Dependencies of the license service. */
export interface LicenseDeps {
  repo: Repository;
  crypto: LicenseCrypto;
  blobs: { read(id: string): AsyncIterable<Uint8Array> };
  now: () => Date;
  limits: ReleaseLimits;
  identifyLimits: IdentifyLimits;
  limiter: UsageLimiter;
  /** Service identifier written into license slots and signer JSON (its base URL). */
  service: string;
  /** Time budget of one identify request, in milliseconds (`IKI_IDENTIFY_BUDGET_MS`). */
  identifyBudgetMs?: number;
  /** License creations per seller per hour (`IKI_LICENSES_PER_SELLER_PER_HOUR`); unlimited when absent. */
  licensesPerSellerPerHour?: number;
  /** The key of the activity address-prefix hashes (services/activity-address.ts); none: no prefix is kept. */
  addressKey?: Uint8Array;
}

/** Who a release or download came from, as the HTTP layer saw it (issue 29). */
export interface ClientInfo {
  /** The client address (`req.ip`, honouring IKI_TRUST_PROXY). */
  ip: string | undefined;
  /** The `X-Iki-Device` header as sent; an invalid one is ignored. */
  device: string | undefined;
}

/** The activity refusal a download's error counts as (issue 29 item 1), if any. */
const REFUSAL_OF_CODE: Readonly<Record<string, RefusalReason>> = {
  LICENSE_REVOKED: 'revoked', LICENSE_SUSPENDED: 'suspended', LICENSE_EXPIRED: 'expired', FORBIDDEN: 'not_licensee',
  COPY_RATE_LIMITED: 'rate_limited', TOO_MANY_DOWNLOADS: 'rate_limited',
};

/** Identify's time budget when the deps name none (the configuration's default). */
const IDENTIFY_BUDGET_MS = 10_000;

/**
 * The largest leak identify decodes for a master whose largest texture is `texture`: informed
 * identify reads leaks resized up to 200 % (docs/watermark.md section 11), so twice the side
 * and four times the area, never beyond the configured `maxPixels` (the WASM decoder caps it
 * again at its own ceiling).
 */
export function leakBound(texture: TextureBound, limits: IdentifyLimits): ImageBound {
  return {
    maxSidePx: texture.maxSidePx * 2,
    maxPixels: Math.min(texture.maxPixels * 4, limits.maxPixels),
  };
}

interface Access {
  license: License;
  master: Master;
  role: 'seller' | 'licensee';
}

const notFound = (): ApiError => new ApiError('LICENSE_NOT_FOUND', 'no such license');

/** Licenses and everything done with them. */
export class LicenseService {
  /** Fixed facts of the licenses whose keys this process released (see `releaseKey`). */
  private readonly refs = new LicenseRefs();
  /** The address-prefix hash of each recent client address (issue 28 item 1: one HMAC per address, not per release). */
  private readonly addressHashes: ((ip: string) => Uint8Array | undefined) | undefined;
  private readonly views: LicenseViews;
  /** Creation, listing and the lifecycle, for the seller (issue 26). */
  readonly sales: LicenseSales;

  constructor(private readonly deps: LicenseDeps) {
    const key = deps.addressKey;
    this.addressHashes = key === undefined ? undefined : memoized((ip) => hashAddress(key, ip));
    this.views = new LicenseViews(deps);
    this.sales = new LicenseSales({ repo: deps.repo, now: deps.now, views: this.views,
      licensesPerSellerPerHour: deps.licensesPerSellerPerHour });
  }

  /** Creates a license for a buyer by the seller's account (`LicenseSales.create`). */
  async create(callerId: string, masterId: string, buyer: BuyerRef): Promise<LicenseView> {
    return (await this.sales.create({ accountId: callerId }, masterId, buyer)).license;
  }

  /** One license, for its seller or licensee. */
  async get(callerId: string, licenseId: string): Promise<LicenseView> {
    const { license, master } = await this.access(callerId, licenseId);
    return this.view(license, master, callerId);
  }

  /** The licenses of one of the caller's masters. */
  async listForMaster(callerId: string, masterId: string): Promise<LicenseView[]> {
    const master = await this.deps.repo.findMaster(masterId);
    if (master === undefined || master.sellerId !== callerId) {
      throw new ApiError('MASTER_NOT_FOUND', 'no such master');
    }
    const licenses = await this.deps.repo.listLicensesByMaster(masterId);
    return Promise.all(licenses.map((l) => this.view(l, master, callerId)));
  }

  /** The caller's licenses as a buyer. */
  async listForLicensee(callerId: string): Promise<LicenseView[]> {
    return this.views.viewAll(await this.deps.repo.listLicensesByLicensee(callerId), callerId);
  }

  /** Revokes a license by the seller's account (`LicenseSales.revoke`). */
  async revoke(callerId: string, licenseId: string, reason: string | undefined): Promise<LicenseView> {
    return this.sales.revoke({ accountId: callerId }, licenseId, reason);
  }

  /** The license's history, newest first. */
  async events(callerId: string, licenseId: string, page: EventPage): Promise<EventView[]> {
    await this.access(callerId, licenseId);
    const events = await this.deps.repo.listEvents(licenseId, page);
    return events.map((e) => ({
      eventId: e.id, at: e.at.toISOString(), kind: e.kind, actorId: e.actorId, details: e.details,
    }));
  }

  /** The copy's ETag, file name and size (when known), for the licensee; counts only a refusal. */
  async copyInfo(callerId: string, licenseId: string): Promise<CopyInfo> {
    const { license, master } = await this.refusalsCounted(licenseId, () => this.licenseeAccess(callerId, licenseId));
    return { fileName: `${safeFileName(master.name)}.ikm`, etag: licenseCopyEtag(master.sha256, license.id),
      size: license.copyBytes };
  }

  /** The license copy for its licensee, within the download limits (`license-download.ts`). */
  async openCopy(callerId: string, licenseId: string, range?: CopyRange, client?: ClientInfo): Promise<OpenCopy> {
    return this.refusalsCounted(licenseId, async () => {
      const { license, master } = await this.licenseeAccess(callerId, licenseId);
      return openLicenseCopy(this.deps, callerId, license, master, range, this.mark(client));
    });
  }

  /** The address-prefix hash and device of a client (issue 29), when known. */
  private mark(client: ClientInfo | undefined): ClientMark | undefined {
    if (client === undefined || this.addressHashes === undefined) return undefined;
    return { addrHash: client.ip === undefined ? undefined : this.addressHashes(client.ip), deviceId: deviceIdOf(client.device) };
  }

  /**
   * Runs `fn`, counting a refusal of the download in the license's activity (a refusal names
   * an existing license; the count is best effort: the refusal is the answer either way).
   */
  private async refusalsCounted<T>(licenseId: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      const reason = err instanceof ApiError ? REFUSAL_OF_CODE[err.code] : undefined;
      if (reason !== undefined) await this.deps.repo.activity.record(licenseId, this.deps.now(), reason).catch(() => {});
      throw err;
    }
  }

  /**
   * Releases the license key sealed to `publicKey` (behaviour rule 4). The key is sealed
   * first, which has no side effects, and handed out only if the atomic count succeeded.
   *
   * One database round trip in the steady state: the license's licensee and master come from
   * `LicenseRefs` (fixed facts), and `tryRecordRelease` checks `sessionId` (the caller's
   * session, when the route left that check to it), the verified address, the license's
   * licensee and revocation and both limits in one statement. Its refusals come in that
   * order, so a caller whose session ended learns nothing of the license. A license not yet
   * known to this process is looked up first; when the caller is not its licensee, the
   * statement still runs (it records nothing for a license that is not the caller's) so that
   * an ended session answers `UNAUTHENTICATED` before `LICENSE_NOT_FOUND` or `FORBIDDEN`.
   */
  async releaseKey(callerId: string, licenseId: string, publicKey: Uint8Array,
    sessionId?: string, client?: ClientInfo): Promise<ReleaseResult> {
    let ref = this.refs.get(licenseId);
    let found: { license: License; master: Master } | undefined;
    if (ref?.licenseeId !== callerId) {
      found = await this.deps.repo.findLicenseAndMaster(licenseId);
      ref = found?.license.licenseeId === callerId ? { licenseeId: callerId, master: masterRef(found.master) } : undefined;
      if (ref !== undefined) this.refs.set(licenseId, ref);
    }
    const sealed = ref === undefined ? undefined : await this.deps.crypto.sealLicenseKey(ref.master, licenseId, publicKey)
      .catch((err: unknown) => { throw fromPortError(err); });
    const { perLicense, perUser, windowSeconds } = this.deps.limits;
    const outcome = await this.deps.repo.tryRecordRelease({
      licenseId, accountId: callerId, sessionId, now: this.deps.now(), windowSeconds, perLicense, perUser,
      mark: this.mark(client),
    });
    if (outcome.kind === 'unauthenticated') {
      throw new ApiError('UNAUTHENTICATED', 'the session has ended; sign in again', undefined,
        { 'WWW-Authenticate': 'Bearer realm="iki", error="invalid_token"' });
    }
    if (outcome.kind === 'unverified') {
      throw new ApiError('EMAIL_NOT_VERIFIED', 'verify your e-mail address first: open the link we sent, or ask for a new one');
    }
    if (outcome.kind === 'not_found' || sealed === undefined) {
      if (found !== undefined && found.master.sellerId === callerId) {
        throw new ApiError('FORBIDDEN', 'only the licensee may do this');
      }
      throw notFound();
    }
    if (outcome.kind === 'revoked') throw revoked();
    if (outcome.kind === 'suspended') throw suspended();
    // The refusal names the date; a refusal is off the hot path, so the look-up costs nothing that matters.
    if (outcome.kind === 'expired') throw expiredError((found?.license ?? await this.deps.repo.findLicense(licenseId))?.expiresAt);
    if (outcome.kind === 'limited') {
      // The seller hears of it (`rate_limit.exceeded`), at most once per license per window.
      await this.deps.repo.notices.rateLimited({ licenseId, actorId: callerId, now: this.deps.now(), limit: 'key_release',
        scope: outcome.scope, windowSeconds, retryAt: outcome.retryAt });
      return { kind: 'limited', outcome };
    }
    return { kind: 'granted', sealed, outcome };
  }

  /**
   * Reads the watermark of a leaked texture of one of the caller's masters (rule 6). The
   * request is counted against the seller's identify rate before `readImage` reads the body,
   * and the image is decoded only within the master's largest texture and the configured cap.
   */
  async identify(callerId: string, masterId: string, readImage: () => Promise<Uint8Array>,
    mediaType: ImageMediaType): Promise<IdentifyView> {
    const master = await this.deps.repo.findMaster(masterId);
    if (master === undefined || master.sellerId !== callerId) {
      throw new ApiError('MASTER_NOT_FOUND', 'no such master');
    }
    await this.deps.limiter.countIdentify(callerId);
    const image = await readImage();
    const texture = await this.textureBound(master);
    // Every license issued for the master is scored against the read (docs/watermark.md section 12).
    const issued = await this.deps.repo.listLicensesByMaster(master.id);
    // A master without textures carries no mark: nothing to decode.
    const found: IdentifyResult = texture.maxPixels === 0
      ? { found: false, reason: 'no_matching_texture', confidence: 0, method: 'blind', texturesTried: 0, match: 'decoded', mixed: false, candidates: [] }
      : await this.deps.crypto.identify(masterRef(master), image, mediaType, () => this.deps.blobs.read(blobOf(master)),
        { budgetMs: this.deps.identifyBudgetMs ?? IDENTIFY_BUDGET_MS, bound: leakBound(texture, this.deps.identifyLimits),
          owner: callerId, issued: issued.map((l) => l.id) })
        .catch((err: unknown) => { throw fromPortError(err); });
    const names = new Map(issued.map((l) => [l.id, l.licenseeName]));
    const result = { ...found, candidates: found.candidates.map((c) => ({ ...c, licenseeName: names.get(c.licenseId) ?? null })) };
    const named = result.candidates.filter((c) => c.named).map((c) => c.licenseId);
    const license = result.found ? await this.deps.repo.findLicense(result.licenseId) : undefined;
    const known = license !== undefined && license.masterId === master.id ? license : undefined;
    const where = result.texture === undefined ? {} : { texture: result.texture.path, scale: result.texture.scale.x };
    await this.deps.repo.appendEvent({ at: this.deps.now(), kind: 'identify', actorId: callerId,
      masterId, licenseId: known?.id, details: result.found
        ? { found: true, confidence: result.confidence, method: result.method, match: result.match, ...where }
        : { found: false, reason: result.reason, ...(named.length === 0 ? {} : { named }), ...where } });
    if (!result.found) return result;
    return { ...result, license: known === undefined ? null : await this.view(known, master, callerId) };
  }

  /**
   * The master's texture bound: recorded at upload, or, for a master stored before it was,
   * read once from the master itself (the complete check reports it) and recorded.
   */
  private async textureBound(master: Master): Promise<TextureBound> {
    if (master.textureBound !== undefined) return master.textureBound;
    const summary = await this.deps.crypto.verifyMasterStream(this.deps.blobs.read(blobOf(master)), { owner: master.sellerId })
      .catch((err: unknown) => { throw fromPortError(err); });
    await this.deps.repo.setMasterTextureBound(master.id, summary.textureBound);
    return summary.textureBound;
  }

  private async access(callerId: string, licenseId: string): Promise<Access> {
    // One round trip: this is on the key-release hot path.
    const found = await this.deps.repo.findLicenseAndMaster(licenseId);
    if (found === undefined) throw notFound();
    const { license, master } = found;
    if (license.licenseeId === callerId) return { license, master, role: 'licensee' };
    if (master.sellerId === callerId) return { license, master, role: 'seller' };
    throw notFound();
  }

  private async licenseeAccess(callerId: string, licenseId: string): Promise<Access> {
    const access = await this.access(callerId, licenseId);
    if (access.role !== 'licensee') throw new ApiError('FORBIDDEN', 'only the licensee may do this');
    refuseUnusable(access.license, this.deps.now());
    return access;
  }

  private view(license: License, master: Master, viewerId: string): Promise<LicenseView> {
    return this.views.view(license, master, viewerId);
  }
}

function revoked(): ApiError {
  return new ApiError('LICENSE_REVOKED', 'the license was revoked; no further copies or keys are issued');
}

function suspended(): ApiError {
  return new ApiError('LICENSE_SUSPENDED', 'the license is suspended by its seller; no copies or keys are issued until it is reinstated');
}

function expiredError(at: Date | undefined): ApiError {
  return new ApiError('LICENSE_EXPIRED', 'the license has expired; no further copies or keys are issued',
    at === undefined ? undefined : { expiresAt: at.toISOString() });
}

/** Refuses a copy of a license that is revoked, suspended or expired at `now`, each with its own code. */
function refuseUnusable(license: License, now: Date): void {
  if (license.revokedAt !== undefined) throw revoked();
  if (license.suspendedAt !== undefined) throw suspended();
  if (expired(license, now)) throw expiredError(license.expiresAt);
}
