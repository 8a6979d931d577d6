/**
 * `WebhookRecords` in memory, for `MemoryRepository`: `fanOut` is called where the memory
 * repository records an event, on the same synchronous turn, as migration 33's trigger does in
 * the event's transaction. No `await` between a check and its write, so each method is atomic.
 */
import { randomBytes } from 'node:crypto';
import type { Master, NewEvent } from './repository.js';
import {
  EVENT_TYPE_OF_KIND, type AttemptOutcome, type ClaimedDelivery, type WebhookDelivery, type WebhookEndpoint, type WebhookRecords,
} from './webhook-records.js';

const copy = <T>(value: T): T => structuredClone(value);

/** The in-memory webhook records over the repository's masters. */
export class MemoryWebhookRecords implements WebhookRecords {
  private readonly endpoints = new Map<string, WebhookEndpoint & { secret: string }>();
  private readonly outbox: WebhookDelivery[] = [];
  private nextId = 1;

  constructor(private readonly masters: Map<string, Master>) {}

  /** Queues the event for every enabled endpoint of the master's seller subscribed to its type. */
  fanOut(event: NewEvent): void {
    const type = EVENT_TYPE_OF_KIND[event.kind];
    const sellerId = this.masters.get(event.masterId)?.sellerId;
    if (type === undefined || sellerId === undefined) return;
    const eventId = `evt_${randomBytes(16).toString('hex')}`;
    for (const e of this.endpoints.values()) {
      if (e.sellerId !== sellerId || e.disabledAt !== undefined || !e.events.includes(type)) continue;
      this.outbox.push({
        id: String(this.nextId++), eventId, endpointId: e.id, type, occurredAt: event.at,
        data: { masterId: event.masterId, licenseId: event.licenseId ?? null, actorId: event.actorId, details: copy(event.details) },
        state: 'pending', attempts: 0, nextAttemptAt: event.at, lastAttemptAt: undefined, lastStatus: undefined,
        lastError: undefined, deliveredAt: undefined,
      });
    }
  }

  async insertEndpoint(e: Omit<WebhookEndpoint, 'disabledAt' | 'disabledReason' | 'failingSince'>, secret: string): Promise<void> {
    this.endpoints.set(e.id, { ...copy(e), disabledAt: undefined, disabledReason: undefined, failingSince: undefined, secret });
  }

  async listEndpoints(sellerId: string): Promise<WebhookEndpoint[]> {
    return [...this.endpoints.values()].filter((e) => e.sellerId === sellerId)
      .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || a.id.localeCompare(b.id)).map((e) => this.view(e));
  }

  async findEndpoint(id: string, sellerId: string): Promise<WebhookEndpoint | undefined> {
    const e = this.endpoints.get(id);
    return e?.sellerId === sellerId ? this.view(e) : undefined;
  }

  async deleteEndpoint(id: string, sellerId: string): Promise<boolean> {
    if (this.endpoints.get(id)?.sellerId !== sellerId) return false;
    this.endpoints.delete(id);
    for (let i = this.outbox.length - 1; i >= 0; i -= 1) if (this.outbox[i]?.endpointId === id) this.outbox.splice(i, 1);
    return true;
  }

  async setEndpointEnabled(id: string, sellerId: string, enabled: boolean, now: Date): Promise<WebhookEndpoint | undefined> {
    const e = this.endpoints.get(id);
    if (e?.sellerId !== sellerId) return undefined;
    if (enabled) Object.assign(e, { disabledAt: undefined, disabledReason: undefined, failingSince: undefined });
    else {
      e.disabledAt ??= now;
      e.disabledReason ??= 'disabled by the seller';
    }
    return this.view(e);
  }

  async listDeliveries(endpointId: string, limit: number): Promise<WebhookDelivery[]> {
    return this.outbox.filter((d) => d.endpointId === endpointId).sort((a, b) => Number(b.id) - Number(a.id)).slice(0, limit).map(copy);
  }

  async resendDelivery(endpointId: string, deliveryId: string, now: Date): Promise<WebhookDelivery | undefined> {
    const d = this.outbox.find((x) => x.id === deliveryId && x.endpointId === endpointId);
    if (d === undefined) return undefined;
    Object.assign(d, { state: 'pending', nextAttemptAt: now, deliveredAt: undefined });
    return copy(d);
  }

  async claimDeliveries(now: Date, leaseUntil: Date, limit: number): Promise<ClaimedDelivery[]> {
    const due = this.outbox.filter((d) => d.state === 'pending' && d.nextAttemptAt <= now
      && this.endpoints.get(d.endpointId)?.disabledAt === undefined)
      .sort((a, b) => a.nextAttemptAt.getTime() - b.nextAttemptAt.getTime() || Number(a.id) - Number(b.id)).slice(0, limit);
    return due.map((d) => {
      d.nextAttemptAt = leaseUntil;
      d.attempts += 1;
      const e = this.endpoints.get(d.endpointId) as WebhookEndpoint & { secret: string };
      return { ...copy(d), url: e.url, secret: e.secret };
    });
  }

  async finishDelivery(o: AttemptOutcome): Promise<{ recorded: boolean; disabled: WebhookEndpoint | undefined }> {
    const d = this.outbox.find((x) => x.id === o.deliveryId);
    if (d === undefined || d.attempts !== o.attempt || d.state !== 'pending') return { recorded: false, disabled: undefined };
    Object.assign(d, { lastAttemptAt: o.now, lastStatus: o.status, lastError: o.error,
      state: o.delivered ? 'delivered' : o.retryAt === undefined ? 'failed' : 'pending',
      nextAttemptAt: o.retryAt ?? d.nextAttemptAt, deliveredAt: o.delivered ? o.now : undefined });
    const e = this.endpoints.get(d.endpointId);
    if (e === undefined) return { recorded: true, disabled: undefined };
    if (o.delivered) {
      e.failingSince = undefined;
      return { recorded: true, disabled: undefined };
    }
    e.failingSince ??= o.now;
    if (e.disabledAt !== undefined || e.failingSince > o.disableIfFailingSince) return { recorded: true, disabled: undefined };
    e.disabledAt = o.now;
    e.disabledReason = `every delivery failed since ${e.failingSince.toISOString().replace(/\.\d{3}Z$/, 'Z')}`;
    return { recorded: true, disabled: this.view(e) };
  }

  private view(e: WebhookEndpoint & { secret: string }): WebhookEndpoint {
    const { secret: _secret, ...rest } = e;
    return copy(rest);
  }
}
