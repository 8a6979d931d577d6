/**
 * The schema steps of selling from a shop (issue 26 items 1 to 3): seller API keys, idempotent
 * license creation with the seller's reference, and license expiry and suspension, which the
 * key release (`iki_release`) checks. Appended to `MIGRATIONS` (migrations.ts) in order;
 * append-only like every migration.
 */
import type { Migration } from './migrations.js';
import { RELEASE_AT_CONSTANT_COST } from './release-migration.js';

/**
 * `sql` with each `[from, to]` replaced, where every `from` must occur exactly once: a
 * migration derived from an earlier one's text fails at load (and with it every test), never
 * silently yields a different function.
 */
export function splice(migration: string, sql: string, splices: readonly (readonly [from: string, to: string])[]): string {
  let out = sql;
  for (const [from, to] of splices) {
    if (out.split(from).length !== 2) throw new Error(`${migration}: "${from.trim()}" is not in the text it derives from exactly once`);
    out = out.replace(from, to);
  }
  return out;
}

/**
 * Migration 32's `iki_release`: migration 21's function (the key release at a constant cost,
 * release-migration.ts) with the two lifecycle checks of issue 26 item 3 spliced in, derived
 * from 21's text rather than retyped so that the two cannot drift.
 */
export const RELEASE_WITH_LIFECYCLE = splice('migration 32', RELEASE_AT_CONSTANT_COST.slice(RELEASE_AT_CONSTANT_COST.indexOf('CREATE FUNCTION iki_release(')), [
  ['CREATE FUNCTION iki_release(', 'CREATE OR REPLACE FUNCTION iki_release('],
  ['l.revoked_at, l.release_count INTO lic', 'l.revoked_at, l.release_count, l.suspended_at, l.expires_at INTO lic'],
  ["IF lic.revoked_at IS NOT NULL THEN outcome := 'revoked'; RETURN; END IF;\n",
    "IF lic.revoked_at IS NOT NULL THEN outcome := 'revoked'; RETURN; END IF;\n"
    + "  IF lic.suspended_at IS NOT NULL THEN outcome := 'suspended'; RETURN; END IF;\n"
    + "  IF lic.expires_at IS NOT NULL AND lic.expires_at <= p_now THEN outcome := 'expired'; RETURN; END IF;\n"],
]);

/**
 * Migration 33's trigger function: one outbox row per enabled endpoint of the master's seller
 * subscribed to the event's type. Migration 35 replaces it with two more kinds spliced in.
 */
const WEBHOOK_FANOUT = `CREATE FUNCTION iki_webhook_fanout() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  t text;
  seller text;
BEGIN
  t := CASE NEW.kind WHEN 'license_created' THEN 'license.created' WHEN 'revoke' THEN 'license.revoked'
    WHEN 'suspend' THEN 'license.suspended' WHEN 'reinstate' THEN 'license.reinstated'
    WHEN 'release' THEN 'key.released' WHEN 'download' THEN 'copy.downloaded' WHEN 'identify' THEN 'leak.identified'
    ELSE NULL END;
  IF t IS NULL OR NEW.master_id IS NULL THEN RETURN NULL; END IF;
  SELECT m.seller_id INTO seller FROM masters m WHERE m.id = NEW.master_id;
  IF NOT FOUND THEN RETURN NULL; END IF;
  INSERT INTO webhook_outbox (event_id, endpoint_id, type, occurred_at, data, next_attempt_at)
    SELECT x.evt, e.id, t, NEW.at, jsonb_build_object('masterId', NEW.master_id, 'licenseId', NEW.license_id,
      'actorId', NEW.actor_id, 'details', NEW.details), NEW.at
    FROM webhook_endpoints e, (SELECT 'evt_' || replace(gen_random_uuid()::text, '-', '') AS evt) x
    WHERE e.seller_id = seller AND e.disabled_at IS NULL AND t = ANY (e.events);
  RETURN NULL;
END $$;
`;

/** Migration 35's fan-out: migration 33's with `expire` and `rate_limited` mapped (issue 26 item 4). */
export const FANOUT_WITH_NOTICES = splice('migration 35', WEBHOOK_FANOUT, [
  ['CREATE FUNCTION', 'CREATE OR REPLACE FUNCTION'],
  ["WHEN 'identify' THEN 'leak.identified'",
    "WHEN 'identify' THEN 'leak.identified'\n    WHEN 'expire' THEN 'license.expired' WHEN 'rate_limited' THEN 'rate_limit.exceeded'"],
]);

/** Versions 30 to 35. */
export const SELL_MIGRATIONS: readonly Migration[] = [
  {
    version: 30,
    name: 'seller API keys',
    // Issue 26 item 1: only the SHA-256 of a key's secret is stored (the secret has 256 random
    // bits, so a slow hash would add nothing); `hint` is its last four characters.
    sql: `
CREATE TABLE api_keys (
  id text PRIMARY KEY CHECK (id ~ '^ak_[0-9a-f]{24}$'),
  account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  name text NOT NULL,
  secret_hash text NOT NULL UNIQUE CHECK (secret_hash ~ '^[0-9a-f]{64}$'),
  hint text NOT NULL,
  scopes text[] NOT NULL,
  created_at timestamptz NOT NULL,
  last_used_at timestamptz,
  revoked_at timestamptz
);
CREATE INDEX api_keys_account ON api_keys (account_id, created_at DESC);
`,
  },
  {
    version: 31,
    name: 'idempotent license creation and the seller\'s reference',
    // Issue 26 item 2: one row per (seller, Idempotency-Key), inserted first in the creating
    // transaction, so a concurrent creation with the same key waits on the primary key and then
    // finds the committed row. Kept as long as the license (at least the 24 hours promised).
    sql: `
ALTER TABLE licenses ADD COLUMN external_ref text;
CREATE INDEX licenses_external_ref ON licenses (external_ref) WHERE external_ref IS NOT NULL;
CREATE TABLE license_idempotency (
  seller_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  key text NOT NULL,
  request_hash text NOT NULL CHECK (request_hash ~ '^[0-9a-f]{64}$'),
  license_id text REFERENCES licenses (id),
  created_at timestamptz NOT NULL,
  PRIMARY KEY (seller_id, key)
);
`,
  },
  {
    version: 32,
    name: 'license expiry and suspension, checked by the key release',
    // Issue 26 item 3: the license row also reads suspended_at and expires_at, and after the
    // revocation check a suspended license answers 'suspended' and one at or past its expiry
    // (p_now >= expires_at) answers 'expired'. Otherwise migration 21's function, unchanged.
    sql: `
ALTER TABLE licenses ADD COLUMN expires_at timestamptz, ADD COLUMN suspended_at timestamptz;
${RELEASE_WITH_LIFECYCLE}`,
  },
  {
    version: 33,
    name: 'webhook endpoints and the outbox',
    // Issue 26 item 4. An AFTER INSERT trigger on `events` writes one outbox row per enabled
    // endpoint of the master's seller that subscribed to the event's type, in the transaction
    // that wrote the event (so in the one that made the change): a change commits with its
    // deliveries or not at all. Every row of one event shares its event id. The delivery loop
    // (services/webhook-delivery.ts) claims due rows with FOR UPDATE SKIP LOCKED and pushes
    // next_attempt_at past a lease, so one instance delivers a row at a time.
    sql: `
CREATE TABLE webhook_endpoints (
  id text PRIMARY KEY CHECK (id ~ '^we_[0-9a-f]{24}$'),
  seller_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  url text NOT NULL,
  events text[] NOT NULL,
  secret text NOT NULL,
  created_at timestamptz NOT NULL,
  disabled_at timestamptz,
  disabled_reason text,
  failing_since timestamptz
);
CREATE INDEX webhook_endpoints_seller ON webhook_endpoints (seller_id, created_at DESC);
CREATE TABLE webhook_outbox (
  id bigserial PRIMARY KEY,
  event_id text NOT NULL CHECK (event_id ~ '^evt_[0-9a-f]{32}$'),
  endpoint_id text NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
  type text NOT NULL,
  occurred_at timestamptz NOT NULL,
  data jsonb NOT NULL,
  state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered', 'failed')),
  attempts integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz NOT NULL,
  last_attempt_at timestamptz,
  last_status integer,
  last_error text,
  delivered_at timestamptz,
  UNIQUE (event_id, endpoint_id)
);
CREATE INDEX webhook_outbox_due ON webhook_outbox (next_attempt_at) WHERE state = 'pending';
CREATE INDEX webhook_outbox_endpoint ON webhook_outbox (endpoint_id, id DESC);
${WEBHOOK_FANOUT}CREATE TRIGGER events_webhooks AFTER INSERT ON events FOR EACH ROW EXECUTE FUNCTION iki_webhook_fanout();
`,
  },
  {
    version: 34,
    name: 'shop connections (Stripe and Gumroad sales become licenses)',
    // Issue 26 item 5: one row per shop a seller connects: Stripe's endpoint signing secret (the
    // seller copies it from Stripe) or the random token of Gumroad's secret ping URL, which
    // price or product id licenses which master, and what a refund or dispute does. Licenses
    // are made idempotently under the shop's event or sale id.
    sql: `
CREATE TABLE shop_connections (
  id text PRIMARY KEY CHECK (id ~ '^shop_[0-9a-f]{24}$'),
  seller_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  kind text NOT NULL CHECK (kind IN ('stripe', 'gumroad')),
  secret text NOT NULL,
  products jsonb NOT NULL,
  on_refund text NOT NULL CHECK (on_refund IN ('suspend', 'revoke', 'none')),
  created_at timestamptz NOT NULL
);
CREATE INDEX shop_connections_seller ON shop_connections (seller_id, created_at DESC);
`,
  },
  {
    version: 35,
    name: 'license.expired and rate_limit.exceeded webhook events',
    // Issue 26 item 4: the two events not tied to a request that succeeds. expiry_noticed_at is
    // set, once, by the statement that writes a license's `expire` event (the delivery loop's
    // poll, storage/notice-records.ts), so each license expires once for the seller however
    // many instances poll; rate_limit_noticed_at is when its last `rate_limited` event was
    // written, so at most one is written per license per limit window. The partial index keeps
    // the poll to the licenses still to be noticed.
    sql: `
ALTER TABLE licenses ADD COLUMN expiry_noticed_at timestamptz, ADD COLUMN rate_limit_noticed_at timestamptz;
CREATE INDEX licenses_expiry_due ON licenses (expires_at) WHERE expires_at IS NOT NULL AND expiry_noticed_at IS NULL;
${FANOUT_WITH_NOTICES}`,
  },
];
