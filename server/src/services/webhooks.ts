/**
 * A seller's webhook endpoints (issue 26 item 4): registration (URL, events, a `whsec_` secret
 * shown once), listing, enable/disable, deletion, the delivery log and "resend". The outbox is
 * written with each change by the storage (migration 33's trigger, or the memory fake), and
 * `webhook-delivery.ts` delivers it.
 *
 * The service signs with the secret on every delivery, as Stripe does, so it is stored sealed
 * under a key of the root secret (`secret-box.ts`, docs/format.md §8.5), not as a hash; it is
 * returned only by the creation and never logged.
 */
import { randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import { ApiError } from '../errors.js';
import type { Repository } from '../storage/repository.js';
import type { WebhookDelivery, WebhookEndpoint, WebhookEventType } from '../storage/webhook-records.js';
import type { SecretBox, SecretPlace } from './secret-box.js';
import { isBlockedAddress, webhookUrl } from './webhook-http.js';

/** Where an endpoint's secret is stored (its sealing's associated data). */
export const webhookSecretPlace = (id: string): SecretPlace => ({ table: 'webhook_endpoints', id });

/** Endpoint ids: `we_` and 24 hex digits. */
export const WEBHOOK_ID_PATTERN = '^we_[0-9a-f]{24}$';
/** Delivery ids: the outbox row's number. */
export const DELIVERY_ID_PATTERN = '^[1-9][0-9]{0,17}$';
/** Endpoints per seller at most. */
export const MAX_WEBHOOK_ENDPOINTS = 16;
/** Characters of an endpoint URL at most. */
export const MAX_WEBHOOK_URL_CHARS = 2048;
/** Deliveries of one endpoint's log at most. */
export const DELIVERY_LOG_LIMIT = 100;

/** An endpoint as the API answers it. */
export interface EndpointView {
  webhookId: string;
  url: string;
  events: WebhookEventType[];
  createdAt: string;
  enabled: boolean;
  disabledAt: string | null;
  disabledReason: string | null;
  /** Why, as a code a page maps to its own words: the seller disabled it, or the failure run did. */
  disabledReasonCode: WebhookDisabledCode | null;
  failingSince: string | null;
}

/** The codes of {@link EndpointView.disabledReasonCode}. */
export const WEBHOOK_DISABLED_CODES = ['seller', 'failing'] as const;
export type WebhookDisabledCode = (typeof WEBHOOK_DISABLED_CODES)[number];

/** The stored reason's code: the failure run's reason names it, every other one is the seller's. */
const disabledCode = (e: WebhookEndpoint): WebhookDisabledCode | null =>
  (e.disabledAt === undefined ? null : e.disabledReason?.startsWith('every delivery failed') === true ? 'failing' : 'seller');

/** A delivery as the API answers it (the seller's delivery log). */
export interface DeliveryView {
  deliveryId: string;
  eventId: string;
  type: WebhookEventType;
  occurredAt: string;
  state: WebhookDelivery['state'];
  attempts: number;
  lastAttemptAt: string | null;
  lastStatus: number | null;
  lastError: string | null;
  nextAttemptAt: string | null;
  deliveredAt: string | null;
}

const iso = (d: Date | undefined): string | null => (d === undefined ? null : d.toISOString());

export const endpointView = (e: WebhookEndpoint): EndpointView => ({
  webhookId: e.id, url: e.url, events: e.events, createdAt: e.createdAt.toISOString(), enabled: e.disabledAt === undefined,
  disabledAt: iso(e.disabledAt), disabledReason: e.disabledReason ?? null, disabledReasonCode: disabledCode(e), failingSince: iso(e.failingSince),
});

export const deliveryView = (d: WebhookDelivery): DeliveryView => ({
  deliveryId: d.id, eventId: d.eventId, type: d.type, occurredAt: d.occurredAt.toISOString(), state: d.state,
  attempts: d.attempts, lastAttemptAt: iso(d.lastAttemptAt), lastStatus: d.lastStatus ?? null, lastError: d.lastError ?? null,
  nextAttemptAt: d.state === 'pending' ? d.nextAttemptAt.toISOString() : null, deliveredAt: iso(d.deliveredAt),
});

/** Dependencies of the endpoint operations. */
export interface WebhookServiceDeps {
  repo: Repository;
  now: () => Date;
  /** IKI_WEBHOOK_ALLOW_PRIVATE: addresses in private ranges may be registered (development only). */
  allowPrivate: boolean;
  /** Seals the endpoints' secrets in storage. */
  secrets: SecretBox;
}

const notFound = (): ApiError => new ApiError('WEBHOOK_NOT_FOUND', 'no such webhook endpoint of yours');

/** The seller's webhook endpoints. */
export class WebhookService {
  constructor(private readonly deps: WebhookServiceDeps) {}

  /** Registers an endpoint; the answer carries its secret, this once. */
  async create(sellerId: string, urlText: string, events: WebhookEventType[]): Promise<EndpointView & { secret: string }> {
    const url = webhookUrl(urlText);
    if (url === undefined || urlText.length > MAX_WEBHOOK_URL_CHARS) {
      throw new ApiError('VALIDATION_FAILED', 'url must be an http or https URL without user name or password',
        { errors: [{ path: '/url', message: 'must be an http(s) URL without credentials' }] });
    }
    const literal = url.hostname.replace(/^\[|\]$/g, '');
    if (!this.deps.allowPrivate && isIP(literal) !== 0 && isBlockedAddress(literal)) {
      // Names are checked on every delivery, after resolution; a literal can be refused now.
      throw new ApiError('VALIDATION_FAILED', 'url points to a private, loopback or reserved address',
        { errors: [{ path: '/url', message: 'must not be a private, loopback or reserved address' }] });
    }
    const existing = await this.deps.repo.webhooks.listEndpoints(sellerId);
    if (existing.length >= MAX_WEBHOOK_ENDPOINTS) {
      throw new ApiError('WEBHOOK_LIMIT_REACHED', `at most ${MAX_WEBHOOK_ENDPOINTS} webhook endpoints; delete one first`);
    }
    const secret = `whsec_${randomBytes(32).toString('base64url')}`;
    const endpoint = { id: `we_${randomBytes(12).toString('hex')}`, sellerId, url: url.href, events: [...new Set(events)],
      createdAt: this.deps.now() };
    await this.deps.repo.webhooks.insertEndpoint(endpoint, this.deps.secrets.seal(secret, webhookSecretPlace(endpoint.id)));
    return { ...endpointView({ ...endpoint, disabledAt: undefined, disabledReason: undefined, failingSince: undefined }), secret };
  }

  async list(sellerId: string): Promise<EndpointView[]> {
    return (await this.deps.repo.webhooks.listEndpoints(sellerId)).map(endpointView);
  }

  async remove(sellerId: string, id: string): Promise<void> {
    if (!await this.deps.repo.webhooks.deleteEndpoint(id, sellerId)) throw notFound();
  }

  /** Enables (a new run: failures forgotten, pending deliveries resume) or disables an endpoint. */
  async setEnabled(sellerId: string, id: string, enabled: boolean): Promise<EndpointView> {
    const e = await this.deps.repo.webhooks.setEndpointEnabled(id, sellerId, enabled, this.deps.now());
    if (e === undefined) throw notFound();
    return endpointView(e);
  }

  /** The endpoint's delivery log, newest first. */
  async deliveries(sellerId: string, id: string): Promise<DeliveryView[]> {
    if (await this.deps.repo.webhooks.findEndpoint(id, sellerId) === undefined) throw notFound();
    return (await this.deps.repo.webhooks.listDeliveries(id, DELIVERY_LOG_LIMIT)).map(deliveryView);
  }

  /** Queues a delivery again (same event id, so a receiver that saw it can tell). */
  async resend(sellerId: string, id: string, deliveryId: string): Promise<DeliveryView> {
    if (await this.deps.repo.webhooks.findEndpoint(id, sellerId) === undefined) throw notFound();
    const d = await this.deps.repo.webhooks.resendDelivery(id, deliveryId, this.deps.now());
    if (d === undefined) throw new ApiError('WEBHOOK_DELIVERY_NOT_FOUND', 'no such delivery of this endpoint');
    return deliveryView(d);
  }
}
