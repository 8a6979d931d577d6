/**
 * The webhook delivery loop (issue 26 item 4), run by every instance: it claims due outbox rows
 * (the storage's `claimDeliveries`: FOR UPDATE SKIP LOCKED and a lease, so two instances never
 * hold one row), POSTs each signed with its endpoint's secret (`Iki-Signature`, @iki/core's
 * `signWebhook`, docs/format.md §14) through the SSRF-safe sender, and records the attempt.
 *
 * Retries: after failed attempt n the next comes `retryDelayMs(n)` later (1 minute doubling,
 * at most 6 hours), for `retryHours` (72 by default, at least 24) after the event; then the
 * delivery is `failed`. An endpoint whose deliveries have all failed for `retryHours` is
 * disabled (nothing is queued for it until its seller enables it again), the seller is mailed
 * (`Mailer.sendWebhookDisabled`), a warning logged, and the page shows `disabledReason`.
 *
 * Each poll first writes the `expire` event (`license.expired`) of licenses that passed their
 * expiry (`repo.notices.noticeExpired`, once per license across instances), so a license's
 * expiry reaches its seller within one poll interval of an instance running this loop.
 *
 * A crash between a change's commit and its delivery loses nothing: the row stays pending and
 * the next instance to poll delivers it; one that crashes mid-delivery leaves a lease that
 * ends after `timeoutMs` + 30 s, then the row is due again (at least once; receivers
 * deduplicate by `Iki-Event-Id`, the same on every attempt and resend).
 */
import { signWebhook } from '@iki/core';
import type { Logger } from '../logger.js';
import type { Mailer } from './mailer.js';
import type { Repository } from '../storage/repository.js';
import type { ClaimedDelivery } from '../storage/webhook-records.js';
import type { WebhookSettings } from '../webhook-config.js';
import { SealedSecretError, type SecretBox } from './secret-box.js';
import { postWebhook, type WebhookPostOptions, type WebhookPostResult } from './webhook-http.js';
import { webhookSecretPlace } from './webhooks.js';

/** Delay after the n-th failed attempt (n >= 1): one minute, doubling, at most six hours. */
export function retryDelayMs(attempt: number): number {
  return Math.min(60_000 * 2 ** Math.min(attempt - 1, 20), 6 * 3600_000);
}

/** Bytes of an endpoint's answer read at most. */
const MAX_RESPONSE_BYTES = 64 * 1024;
/** Deliveries one poll claims at most. */
const BATCH = 20;

/** The JSON body of a delivery: the same shape for every event type (OpenAPI `WebhookEvent`). */
export function eventBody(d: Pick<ClaimedDelivery, 'eventId' | 'type' | 'occurredAt' | 'data'>): string {
  return JSON.stringify({ id: d.eventId, type: d.type, createdAt: d.occurredAt.toISOString(), data: d.data });
}

/** Dependencies of the loop. */
export interface WebhookDeliveryDeps {
  repo: Repository;
  now: () => Date;
  logger: Logger;
  settings: WebhookSettings;
  /** Opens the endpoints' sealed secrets. */
  secrets: SecretBox;
  /** Tells the seller when an endpoint is disabled. */
  mailer?: Mailer;
  /** The DNS look-up of the sender (tests); `dns.lookup` by default. */
  resolve?: WebhookPostOptions['resolve'];
}

/** Delivers the outbox. */
export class WebhookDeliverer {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = true;

  constructor(private readonly deps: WebhookDeliveryDeps) {}

  /** Claims and delivers one batch; resolves with how many deliveries it attempted. */
  async runOnce(): Promise<number> {
    const { repo, now, settings } = this.deps;
    const at = now();
    // Licenses that passed their expiry since the last poll get their `license.expired` event
    // (once each, whichever instance marks them first); its deliveries are due at once.
    await repo.notices.noticeExpired(at, BATCH);
    const claimed = await repo.webhooks.claimDeliveries(at, new Date(at.getTime() + settings.timeoutMs + 30_000), BATCH);
    await Promise.all(claimed.map((d) => this.deliver(d)));
    return claimed.length;
  }

  /** Polls every `pollMs` (at once again after a full batch) until `stop`. */
  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    const tick = () => {
      this.running = this.runOnce().then((n) => {
        if (!this.stopped) this.timer = setTimeout(tick, n >= BATCH ? 0 : this.deps.settings.pollMs);
      }, (err: unknown) => {
        this.deps.logger.warn('webhook delivery poll failed', { error: err instanceof Error ? err.message : String(err) });
        if (!this.stopped) this.timer = setTimeout(tick, this.deps.settings.pollMs);
      });
    };
    tick();
  }

  /** Stops polling and waits for the batch under way. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  /** Signs and sends one delivery; a secret that does not open fails the attempt (it is retried like any failure). */
  private async post(d: ClaimedDelivery): Promise<WebhookPostResult | { kind: 'failed'; reason: 'secret_unavailable'; status?: undefined }> {
    const { now, settings, logger } = this.deps;
    let secret: string;
    try {
      secret = this.deps.secrets.open(d.secret, webhookSecretPlace(d.endpointId));
    } catch (err) {
      if (!(err instanceof SealedSecretError)) throw err;
      // Another root secret, or a damaged row: nothing can be signed. A restored root secret delivers it on a retry.
      logger.warn('webhook secret does not open with this root secret', { webhookId: d.endpointId });
      return { kind: 'failed', reason: 'secret_unavailable' };
    }
    const body = eventBody(d);
    const signature = await signWebhook(secret, body, Math.floor(now().getTime() / 1000));
    return postWebhook(d.url, new TextEncoder().encode(body),
      { 'iki-signature': signature, 'iki-event-id': d.eventId, 'iki-event-type': d.type },
      { allowPrivate: settings.allowPrivate, timeoutMs: settings.timeoutMs, maxResponseBytes: MAX_RESPONSE_BYTES,
        ...(this.deps.resolve === undefined ? {} : { resolve: this.deps.resolve }) });
  }

  private async deliver(d: ClaimedDelivery): Promise<void> {
    const { repo, now, settings, logger } = this.deps;
    const result = await this.post(d);
    const at = now();
    const delivered = result.kind === 'delivered';
    const windowMs = settings.retryHours * 3600_000;
    const retryAt = delivered || at.getTime() - d.occurredAt.getTime() >= windowMs ? undefined
      : new Date(at.getTime() + retryDelayMs(d.attempts));
    const outcome = await repo.webhooks.finishDelivery({
      deliveryId: d.id, attempt: d.attempts, now: at, delivered, status: result.kind === 'delivered' ? result.status : result.status,
      error: result.kind === 'failed' ? result.reason : undefined, retryAt, disableIfFailingSince: new Date(at.getTime() - windowMs),
    });
    if (outcome.disabled !== undefined) {
      logger.warn('webhook endpoint disabled after failing for the retry window', { webhookId: outcome.disabled.id,
        sellerId: outcome.disabled.sellerId, failingSince: outcome.disabled.failingSince?.toISOString() });
      const seller = await repo.findAccountById(outcome.disabled.sellerId);
      if (seller !== undefined) {
        await this.deps.mailer?.sendWebhookDisabled?.(seller.email, outcome.disabled.url, outcome.disabled.disabledReason ?? 'failing');
      }
    }
  }
}
