/**
 * What sealing a license key needs of a license, kept in memory between key releases: its
 * licensee and its master's reference (id and SHA-256). These never change for a license (a
 * license is never moved to another master or licensee, and a master's bytes are fixed), so a
 * cached entry is never stale; everything that does change (revocation, the session, the
 * limits) is decided by the release statement itself on every request. The cache saves the
 * license-and-master look-up, one database round trip per release. Bounded: the oldest entry
 * goes when it is full.
 */
import type { MasterRef } from './crypto-port.js';

/** A license's fixed facts for sealing its key. */
export interface LicenseRef {
  licenseeId: string;
  master: MasterRef;
}

/** Entries kept at most, by default (a few hundred bytes each). */
export const LICENSE_REFS_DEFAULT = 10_000;

/** A bounded map from license id to `LicenseRef`, oldest insertion evicted first. */
export class LicenseRefs {
  private readonly entries = new Map<string, LicenseRef>();

  constructor(private readonly capacity = LICENSE_REFS_DEFAULT) {}

  get(licenseId: string): LicenseRef | undefined {
    return this.entries.get(licenseId);
  }

  set(licenseId: string, ref: LicenseRef): void {
    if (this.capacity <= 0) return;
    this.entries.delete(licenseId);
    if (this.entries.size >= this.capacity) {
      const oldest = this.entries.keys().next();
      if (oldest.done !== true) this.entries.delete(oldest.value);
    }
    this.entries.set(licenseId, ref);
  }

  get size(): number {
    return this.entries.size;
  }
}
