/**
 * `WebhookRecords` in SQL (PGlite and PostgreSQL alike, migration 33). Outbox rows are written
 * by the `events` trigger, not here. The claim is one `UPDATE ... WHERE id IN (SELECT ... FOR
 * UPDATE OF o SKIP LOCKED)`: concurrent claims on PostgreSQL skip each other's rows, and the
 * lease written with the claim keeps the row from every later claim until it ends.
 */
import type { SqlDb } from './sql-db.js';
import type {
  AttemptOutcome, ClaimedDelivery, WebhookDelivery, WebhookEndpoint, WebhookEventType, WebhookRecords,
} from './webhook-records.js';

type Row = Record<string, unknown>;

const date = (v: unknown): Date => (v instanceof Date ? v : new Date(String(v)));
const optDate = (v: unknown): Date | undefined => (v === null || v === undefined ? undefined : date(v));
const optText = (v: unknown): string | undefined => (v === null || v === undefined ? undefined : String(v));

function textArray(v: unknown): string[] {
  if (Array.isArray(v)) return v.map(String);
  const text = String(v ?? '{}');
  return text === '{}' ? [] : text.slice(1, -1).split(',');
}

const ENDPOINT_COLUMNS = 'id, seller_id, url, events, created_at, disabled_at, disabled_reason, failing_since';
const DELIVERY_COLUMNS = `o.id::text AS id, o.event_id, o.endpoint_id, o.type, o.occurred_at, o.data, o.state, o.attempts,
  o.next_attempt_at, o.last_attempt_at, o.last_status, o.last_error, o.delivered_at`;

function toEndpoint(r: Row): WebhookEndpoint {
  return {
    id: String(r['id']), sellerId: String(r['seller_id']), url: String(r['url']),
    events: textArray(r['events']) as WebhookEventType[], createdAt: date(r['created_at']),
    disabledAt: optDate(r['disabled_at']), disabledReason: optText(r['disabled_reason']), failingSince: optDate(r['failing_since']),
  };
}

function toDelivery(r: Row): WebhookDelivery {
  const data = r['data'];
  return {
    id: String(r['id']), eventId: String(r['event_id']), endpointId: String(r['endpoint_id']),
    type: String(r['type']) as WebhookEventType, occurredAt: date(r['occurred_at']),
    data: (typeof data === 'string' ? JSON.parse(data) : data) as Record<string, unknown>,
    state: String(r['state']) as WebhookDelivery['state'], attempts: Number(r['attempts']),
    nextAttemptAt: date(r['next_attempt_at']), lastAttemptAt: optDate(r['last_attempt_at']),
    lastStatus: r['last_status'] === null || r['last_status'] === undefined ? undefined : Number(r['last_status']),
    lastError: optText(r['last_error']), deliveredAt: optDate(r['delivered_at']),
  };
}

/** The SQL webhook records over `db`. */
export class SqlWebhookRecords implements WebhookRecords {
  constructor(private readonly db: SqlDb) {}

  async insertEndpoint(e: Omit<WebhookEndpoint, 'disabledAt' | 'disabledReason' | 'failingSince'>, secret: string): Promise<void> {
    await this.db.query(`INSERT INTO webhook_endpoints (id, seller_id, url, events, secret, created_at)
      VALUES ($1, $2, $3, $4::text[], $5, $6)`, [e.id, e.sellerId, e.url, e.events, secret, e.createdAt]);
  }

  async listEndpoints(sellerId: string): Promise<WebhookEndpoint[]> {
    const { rows } = await this.db.query(`SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE seller_id = $1
      ORDER BY created_at DESC, id`, [sellerId]);
    return rows.map(toEndpoint);
  }

  async findEndpoint(id: string, sellerId: string): Promise<WebhookEndpoint | undefined> {
    const { rows } = await this.db.query(`SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE id = $1 AND seller_id = $2`,
      [id, sellerId]);
    return rows[0] === undefined ? undefined : toEndpoint(rows[0]);
  }

  async deleteEndpoint(id: string, sellerId: string): Promise<boolean> {
    const result = await this.db.query('DELETE FROM webhook_endpoints WHERE id = $1 AND seller_id = $2', [id, sellerId]);
    return result.rowCount === 1;
  }

  async setEndpointEnabled(id: string, sellerId: string, enabled: boolean, now: Date): Promise<WebhookEndpoint | undefined> {
    const { rows } = await this.db.query(enabled
      ? `UPDATE webhook_endpoints SET disabled_at = NULL, disabled_reason = NULL, failing_since = NULL
          WHERE id = $1 AND seller_id = $2 RETURNING ${ENDPOINT_COLUMNS}`
      : `UPDATE webhook_endpoints SET disabled_at = COALESCE(disabled_at, $3), disabled_reason = COALESCE(disabled_reason, 'disabled by the seller')
          WHERE id = $1 AND seller_id = $2 RETURNING ${ENDPOINT_COLUMNS}`, enabled ? [id, sellerId] : [id, sellerId, now]);
    return rows[0] === undefined ? undefined : toEndpoint(rows[0]);
  }

  async listDeliveries(endpointId: string, limit: number): Promise<WebhookDelivery[]> {
    const { rows } = await this.db.query(`SELECT ${DELIVERY_COLUMNS} FROM webhook_outbox o WHERE o.endpoint_id = $1
      ORDER BY o.id DESC LIMIT $2`, [endpointId, limit]);
    return rows.map(toDelivery);
  }

  async resendDelivery(endpointId: string, deliveryId: string, now: Date): Promise<WebhookDelivery | undefined> {
    const { rows } = await this.db.query(`UPDATE webhook_outbox o SET state = 'pending', next_attempt_at = $3, delivered_at = NULL
      WHERE o.id = $2::bigint AND o.endpoint_id = $1 RETURNING ${DELIVERY_COLUMNS}`, [endpointId, deliveryId, now]);
    return rows[0] === undefined ? undefined : toDelivery(rows[0]);
  }

  async claimDeliveries(now: Date, leaseUntil: Date, limit: number): Promise<ClaimedDelivery[]> {
    const { rows } = await this.db.query(`UPDATE webhook_outbox o SET next_attempt_at = $2, attempts = o.attempts + 1
      FROM webhook_endpoints e
      WHERE e.id = o.endpoint_id AND o.id IN (
        SELECT d.id FROM webhook_outbox d JOIN webhook_endpoints x ON x.id = d.endpoint_id AND x.disabled_at IS NULL
        WHERE d.state = 'pending' AND d.next_attempt_at <= $1
        ORDER BY d.next_attempt_at, d.id LIMIT $3 FOR UPDATE OF d SKIP LOCKED)
      RETURNING ${DELIVERY_COLUMNS}, e.url, e.secret`, [now, leaseUntil, limit]);
    return rows.map((r) => ({ ...toDelivery(r), url: String(r['url']), secret: String(r['secret']) }));
  }

  async finishDelivery(o: AttemptOutcome): Promise<{ recorded: boolean; disabled: WebhookEndpoint | undefined }> {
    return this.db.transaction(async (tx) => {
      const { rows } = await tx.query(`UPDATE webhook_outbox SET last_attempt_at = $3, last_status = $4, last_error = $5,
          state = $6, next_attempt_at = COALESCE($7, next_attempt_at), delivered_at = $8
        WHERE id = $1::bigint AND attempts = $2 AND state = 'pending' RETURNING endpoint_id`,
      [o.deliveryId, o.attempt, o.now, o.status ?? null, o.error ?? null,
        o.delivered ? 'delivered' : o.retryAt === undefined ? 'failed' : 'pending', o.retryAt ?? null, o.delivered ? o.now : null]);
      const endpointId = rows[0]?.['endpoint_id'];
      if (endpointId === undefined) return { recorded: false, disabled: undefined };
      if (o.delivered) {
        await tx.query('UPDATE webhook_endpoints SET failing_since = NULL WHERE id = $1', [endpointId]);
        return { recorded: true, disabled: undefined };
      }
      await tx.query('UPDATE webhook_endpoints SET failing_since = COALESCE(failing_since, $2) WHERE id = $1', [endpointId, o.now]);
      const disabled = await tx.query(`UPDATE webhook_endpoints SET disabled_at = $2,
          disabled_reason = 'every delivery failed since ' || to_char(failing_since AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')
        WHERE id = $1 AND disabled_at IS NULL AND failing_since <= $3 RETURNING ${ENDPOINT_COLUMNS}`,
      [endpointId, o.now, o.disableIfFailingSince]);
      return { recorded: true, disabled: disabled.rows[0] === undefined ? undefined : toEndpoint(disabled.rows[0]) };
    });
  }
}
