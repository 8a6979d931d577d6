/**
 * A license as its seller or licensee sees it: the parties, the state (issue 26 item 3: the
 * buyer sees the expiry date and a suspension too), and, for the seller only, the licensee's
 * e-mail address (issue 14 item 4) and the seller's own reference (issue 26 item 2).
 */
import type { License, Master, Repository } from '../storage/repository.js';
import { licenseState, type LicenseState } from '../storage/seller-records.js';

/** A party of a license as shown to the other party. */
export interface PartyView {
  accountId: string;
  name: string;
  /**
   * The licensee's e-mail address, shown to the license's seller only (issue 14 item 4), and
   * only when they licensed by that address (issue 22 item 6).
   */
  email?: string;
}

/** A license as its seller or licensee sees it. */
export interface LicenseView {
  licenseId: string;
  masterId: string;
  masterName: string;
  seller: PartyView;
  licensee: PartyView;
  issuedAt: string;
  revokedAt: string | null;
  releaseCount: number;
  /** `active`, `suspended`, `expired` or `revoked`, at the time of the answer. */
  state: LicenseState;
  expiresAt: string | null;
  suspendedAt: string | null;
  /** The seller's reference; shown to the seller only. */
  externalRef?: string | null;
}

/** Builds license views from the stored records. */
export class LicenseViews {
  constructor(private readonly deps: { repo: Repository; now: () => Date }) {}

  private async party(accountId: string, email?: string): Promise<PartyView> {
    const account = await this.deps.repo.findAccountById(accountId);
    return { accountId, name: account?.name ?? '', ...(email === undefined ? {} : { email }) };
  }

  /**
   * The license as `viewerId` sees it: its seller also sees the reference and the address they
   * licensed the buyer by, and only that (issue 22 item 6). Account ids are public (signing-key
   * look-ups, certificates in signed files), so showing the account's address for a license
   * made by id would let any seller learn any account's address; such a license shows the name only.
   */
  async view(license: License, master: Master, viewerId: string): Promise<LicenseView> {
    const seller = viewerId === master.sellerId;
    return {
      licenseId: license.id, masterId: master.id, masterName: master.name,
      seller: await this.party(master.sellerId),
      licensee: await this.party(license.licenseeId, seller ? license.licenseeEmail : undefined),
      issuedAt: license.issuedAt.toISOString(), revokedAt: license.revokedAt?.toISOString() ?? null,
      releaseCount: license.releaseCount,
      state: licenseState(license, this.deps.now()),
      expiresAt: license.expiresAt?.toISOString() ?? null,
      suspendedAt: license.suspendedAt?.toISOString() ?? null,
      ...(seller ? { externalRef: license.externalRef ?? null } : {}),
    };
  }

  /** `licenses` as `viewerId` sees them, each master read once; a license whose master is gone is left out. */
  async viewAll(licenses: readonly License[], viewerId: string): Promise<LicenseView[]> {
    const masters = new Map<string, Master | undefined>();
    const views: LicenseView[] = [];
    for (const license of licenses) {
      if (!masters.has(license.masterId)) masters.set(license.masterId, await this.deps.repo.findMaster(license.masterId));
      const master = masters.get(license.masterId);
      if (master !== undefined) views.push(await this.view(license, master, viewerId));
    }
    return views;
  }
}
