/**
 * The records of signed webhooks (issue 26 item 4), as one part of the `Repository`
 * (`repo.webhooks`): a seller's endpoints and the outbox of deliveries. The SQL implementation
 * (sql-webhooks.ts) writes outbox rows with a trigger on `events` (migration 33), so in the
 * transaction of the change; the memory fake (memory-webhooks.ts) writes them where the memory
 * repository records the event, on the same synchronous turn.
 */

/** The event types an endpoint may subscribe to (the OpenAPI document's `WebhookEvent`). */
export const WEBHOOK_EVENT_TYPES = ['license.created', 'license.revoked', 'license.suspended', 'license.reinstated',
  'license.expired', 'key.released', 'copy.downloaded', 'leak.identified', 'rate_limit.exceeded',
  'license.flagged'] as const;
/** One event type. */
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** The event type of a history event's kind (undefined: no webhook). Mirrors migration 33's trigger. */
export const EVENT_TYPE_OF_KIND: Readonly<Record<string, WebhookEventType>> = {
  license_created: 'license.created', revoke: 'license.revoked', suspend: 'license.suspended',
  reinstate: 'license.reinstated', release: 'key.released', download: 'copy.downloaded', identify: 'leak.identified',
  expire: 'license.expired', rate_limited: 'rate_limit.exceeded', flag: 'license.flagged',
};

/** An endpoint as its seller sees it (the secret is shown only once, at creation). */
export interface WebhookEndpoint {
  id: string;
  sellerId: string;
  url: string;
  events: WebhookEventType[];
  createdAt: Date;
  /** Set when the endpoint kept failing (or its seller disabled it); nothing is queued for it meanwhile. */
  disabledAt: Date | undefined;
  disabledReason: string | undefined;
  /** The first failure of the current run of failures; cleared by a delivery. */
  failingSince: Date | undefined;
}

/** One outbox row: one event for one endpoint, and where its delivery stands. */
export interface WebhookDelivery {
  id: string;
  eventId: string;
  endpointId: string;
  type: WebhookEventType;
  occurredAt: Date;
  data: Record<string, unknown>;
  state: 'pending' | 'delivered' | 'failed';
  attempts: number;
  nextAttemptAt: Date;
  lastAttemptAt: Date | undefined;
  lastStatus: number | undefined;
  lastError: string | undefined;
  deliveredAt: Date | undefined;
}

/** A claimed delivery with what sending it needs. */
export interface ClaimedDelivery extends WebhookDelivery {
  url: string;
  secret: string;
}

/** The outcome of one attempt, as `finishDelivery` records it. */
export interface AttemptOutcome {
  deliveryId: string;
  /** The `attempts` value of the claim: a stale worker (its lease ran out and another claimed) changes nothing. */
  attempt: number;
  now: Date;
  delivered: boolean;
  status: number | undefined;
  error: string | undefined;
  /** When failed: the next attempt's time, or undefined when the delivery gives up. */
  retryAt: Date | undefined;
  /** When failed: disable the endpoint if it has been failing since this time or earlier. */
  disableIfFailingSince: Date;
}

/** The webhook records. */
export interface WebhookRecords {
  insertEndpoint(endpoint: Omit<WebhookEndpoint, 'disabledAt' | 'disabledReason' | 'failingSince'>, secret: string): Promise<void>;
  listEndpoints(sellerId: string): Promise<WebhookEndpoint[]>;
  findEndpoint(id: string, sellerId: string): Promise<WebhookEndpoint | undefined>;
  /** Deletes an endpoint and its deliveries; false when the seller has none such. */
  deleteEndpoint(id: string, sellerId: string): Promise<boolean>;
  /** Enables (clearing the failure run) or disables an endpoint; undefined when the seller has none such. */
  setEndpointEnabled(id: string, sellerId: string, enabled: boolean, now: Date): Promise<WebhookEndpoint | undefined>;
  /** The endpoint's deliveries, newest first, at most `limit`. */
  listDeliveries(endpointId: string, limit: number): Promise<WebhookDelivery[]>;
  /** Queues a delivery again now (same event id); undefined when the endpoint has no such delivery. */
  resendDelivery(endpointId: string, deliveryId: string, now: Date): Promise<WebhookDelivery | undefined>;
  /**
   * Claims at most `limit` pending deliveries due at `now` of enabled endpoints, skipping rows
   * another instance holds, and moves each one's next attempt to `leaseUntil` with its attempt
   * counted, in one statement: until the lease ends, no other claim returns it.
   */
  claimDeliveries(now: Date, leaseUntil: Date, limit: number): Promise<ClaimedDelivery[]>;
  /** Records an attempt; `disabled` tells when this failure disabled the endpoint. */
  finishDelivery(outcome: AttemptOutcome): Promise<{ recorded: boolean; disabled: WebhookEndpoint | undefined }>;
}
