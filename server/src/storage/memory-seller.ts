/**
 * `SellerRecords` in memory, for `MemoryRepository` (which owns the accounts, masters and
 * licenses maps and hands them in). Like the rest of the fake, every method runs without an
 * `await` between its check and its write, so it is atomic on Node's single thread.
 */
import type { Account, License, Master, NewEvent } from './repository.js';
import {
  createdEvent, licenseState, suspensionEvent, type ApiKeyRecord, type CreateLicenseOutcome, type LicenseQuery, type NewLicense,
  type SellerRecords, type SuspensionChange, type SuspensionOutcome,
} from './seller-records.js';

const copy = <T>(value: T): T => structuredClone(value);

/** What the memory repository shares with its seller records. */
export interface MemorySellerDeps {
  accounts: Map<string, Account>;
  masters: Map<string, Master>;
  licenses: Map<string, License>;
  pushEvent(event: NewEvent): void;
}

/** The in-memory seller records. */
export class MemorySellerRecords implements SellerRecords {
  private readonly keys = new Map<string, ApiKeyRecord & { secretHash: string }>();
  private readonly idempotency = new Map<string, { licenseId: string; requestHash: string }>();

  constructor(private readonly deps: MemorySellerDeps) {}

  async insertApiKey(key: Omit<ApiKeyRecord, 'lastUsedAt' | 'revokedAt'>, secretHash: string): Promise<void> {
    this.keys.set(key.id, { ...copy(key), lastUsedAt: undefined, revokedAt: undefined, secretHash });
  }

  async useApiKey(secretHash: string, now: Date): Promise<ApiKeyRecord | undefined> {
    const key = [...this.keys.values()].find((k) => k.secretHash === secretHash && k.revokedAt === undefined);
    if (key === undefined) return undefined;
    key.lastUsedAt = now;
    return this.view(key);
  }

  async listApiKeys(accountId: string): Promise<ApiKeyRecord[]> {
    return [...this.keys.values()].filter((k) => k.accountId === accountId)
      .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || a.id.localeCompare(b.id)).map((k) => this.view(k));
  }

  async revokeApiKey(id: string, accountId: string, now: Date): Promise<ApiKeyRecord | undefined> {
    const key = this.keys.get(id);
    if (key?.accountId !== accountId) return undefined;
    key.revokedAt ??= now;
    return this.view(key);
  }

  async createLicense(input: NewLicense): Promise<CreateLicenseOutcome> {
    const { license, idempotency } = input;
    const slot = idempotency === undefined ? undefined : `${idempotency.sellerId}\n${idempotency.key}`;
    const earlier = slot === undefined ? undefined : this.idempotency.get(slot);
    if (earlier !== undefined) {
      return earlier.requestHash === idempotency?.requestHash ? { kind: 'replayed', licenseId: earlier.licenseId } : { kind: 'key_conflict' };
    }
    if (this.deps.licenses.has(license.id)) return { kind: 'id_taken' };
    // As the SQL foreign key: a license of a master that is gone (deleted meanwhile) fails.
    if (!this.deps.masters.has(license.masterId)) throw new Error('insert violates foreign key: no such master');
    this.deps.licenses.set(license.id, { ...copy(license), revokedAt: undefined, releaseCount: 0 });
    if (slot !== undefined && idempotency !== undefined) {
      this.idempotency.set(slot, { licenseId: license.id, requestHash: idempotency.requestHash });
    }
    this.deps.pushEvent(createdEvent(input));
    return { kind: 'created' };
  }

  async findIdempotentLicense(sellerId: string, key: string): Promise<{ licenseId: string; requestHash: string } | undefined> {
    return copy(this.idempotency.get(`${sellerId}\n${key}`));
  }

  async queryLicenses(q: LicenseQuery): Promise<License[]> {
    const { masters, licenses } = this.deps;
    const after = q.after;
    return [...licenses.values()].filter((l) => masters.get(l.masterId)?.sellerId === q.sellerId
      && (q.masterId === undefined || l.masterId === q.masterId)
      && (q.buyer === undefined || l.licenseeId === q.buyer || l.licenseeEmail === q.buyer)
      && (q.externalRef === undefined || l.externalRef === q.externalRef)
      && (q.state === undefined || licenseState(l, q.now) === q.state)
      && (after === undefined || l.issuedAt.getTime() < after.issuedAt.getTime()
        || (l.issuedAt.getTime() === after.issuedAt.getTime() && l.id < after.id)))
      .sort((a, b) => b.issuedAt.getTime() - a.issuedAt.getTime() || (a.id < b.id ? 1 : -1))
      .slice(0, q.limit).map(copy);
  }

  async setSuspended(change: SuspensionChange): Promise<SuspensionOutcome> {
    const license = this.deps.licenses.get(change.licenseId);
    if (license === undefined) return { kind: 'not_found' };
    if (license.revokedAt !== undefined) return { kind: 'revoked', license: copy(license) };
    if ((license.suspendedAt !== undefined) === change.suspend) return { kind: 'unchanged', license: copy(license) };
    if (change.suspend) license.suspendedAt = change.now;
    else delete license.suspendedAt;
    this.deps.pushEvent(suspensionEvent(change, license.masterId));
    return { kind: 'changed', license: copy(license) };
  }

  private view(key: ApiKeyRecord & { secretHash: string }): ApiKeyRecord {
    const { secretHash: _secret, ...rest } = key;
    return copy(rest);
  }
}
