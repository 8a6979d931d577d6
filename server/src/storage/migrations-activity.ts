/**
 * The schema steps of issue 29 (activity per license, address prefixes, devices, flags):
 * counters per license and quarter hour, kept in the statement that records a key release (or
 * a download, or a refusal), so that reading a month of activity costs the number of busy
 * quarter hours, never the number of releases. Appended to `MIGRATIONS` (migrations.ts) in
 * order; append-only like every migration.
 *
 * Why quarter hours and not hours: a time zone's offset is a multiple of 15 minutes (St John's
 * is -03:30, Kathmandu +05:45), so a quarter hour lies inside one local hour and one local day
 * of every zone, and the answer in any zone is exact (storage/sql-activity.ts groups quarter
 * hours by `date_trunc(bucket, slot, zone)`).
 */
import type { Migration } from './migrations.js';
import { RELEASE_WITH_LIFECYCLE, splice } from './migrations-sell.js';

/**
 * Migration 45's `iki_release`: migration 32's function with two more parameters (the hash of
 * the caller's address prefix and the player's device id, both optional: a call with the
 * seven of before still resolves to it, so an instance of the previous version keeps working
 * during a rolling update) and the activity counters: every refusal that names a license
 * (revoked, suspended, expired, rate limited, not its licensee) counts one, and a granted
 * release counts one with its address prefix and device. Derived from 32's text, so the
 * checks cannot drift.
 */
const RELEASE_WITH_ACTIVITY = splice('migration 45', RELEASE_WITH_LIFECYCLE, [
  ['CREATE OR REPLACE FUNCTION iki_release(',
    'DROP FUNCTION iki_release(text, text, text, timestamptz, timestamptz, integer, integer);\nCREATE FUNCTION iki_release('],
  ['p_per_license integer, p_per_user integer,\n',
    'p_per_license integer, p_per_user integer, p_addr bytea DEFAULT NULL, p_device text DEFAULT NULL,\n'],
  ["IF NOT FOUND OR lic.licensee_id <> p_account THEN outcome := 'not_found'; RETURN; END IF;",
    "IF NOT FOUND THEN outcome := 'not_found'; RETURN; END IF;\n"
    + "  IF lic.licensee_id <> p_account THEN\n"
    + "    PERFORM iki_activity_add(p_license, p_now, 'not_licensee', NULL, NULL); outcome := 'not_found'; RETURN;\n"
    + '  END IF;'],
  ["THEN outcome := 'revoked'; RETURN;",
    "THEN PERFORM iki_activity_add(p_license, p_now, 'revoked', NULL, NULL); outcome := 'revoked'; RETURN;"],
  ["THEN outcome := 'suspended'; RETURN;",
    "THEN PERFORM iki_activity_add(p_license, p_now, 'suspended', NULL, NULL); outcome := 'suspended'; RETURN;"],
  ["THEN outcome := 'expired'; RETURN;",
    "THEN PERFORM iki_activity_add(p_license, p_now, 'expired', NULL, NULL); outcome := 'expired'; RETURN;"],
  ["outcome := 'limited'; release_count := lic.release_count; RETURN;",
    "PERFORM iki_activity_add(p_license, p_now, 'rate_limited', NULL, NULL);\n"
    + "    outcome := 'limited'; release_count := lic.release_count; RETURN;"],
  ["  outcome := 'granted';\n",
    "  PERFORM iki_activity_add(p_license, recorded_at, 'release', p_addr, p_device);\n  outcome := 'granted';\n"],
]);

/** What one call of `iki_activity_add` counts (`p_kind`). */
export const ACTIVITY_KINDS = ['release', 'download', 'resume', 'rate_limited', 'revoked', 'expired', 'suspended',
  'not_licensee'] as const;

/**
 * The counters and `iki_activity_add`: one upsert of the license's quarter-hour row, and, for a
 * release or download that names them, one row per distinct address prefix and device in that
 * quarter hour (inserted once, `ON CONFLICT DO NOTHING`), which is what the distinct counts of
 * any bucket are made of. A refused client only ever adds to a counter: its refusals cost one
 * row per license and quarter hour however many it makes. Each table is pruned with the other
 * history (`ActivityRecords.prune`), by its `slot` index.
 */
const ACTIVITY_TABLES = `
CREATE TABLE activity_slots (
  license_id text NOT NULL REFERENCES licenses (id) ON DELETE CASCADE,
  slot timestamptz NOT NULL,
  releases integer NOT NULL DEFAULT 0,
  downloads integer NOT NULL DEFAULT 0,
  resumes integer NOT NULL DEFAULT 0,
  refused_rate_limited integer NOT NULL DEFAULT 0,
  refused_revoked integer NOT NULL DEFAULT 0,
  refused_expired integer NOT NULL DEFAULT 0,
  refused_suspended integer NOT NULL DEFAULT 0,
  refused_not_licensee integer NOT NULL DEFAULT 0,
  PRIMARY KEY (license_id, slot)
);
CREATE INDEX activity_slots_slot ON activity_slots (slot);
CREATE TABLE activity_addresses (
  license_id text NOT NULL REFERENCES licenses (id) ON DELETE CASCADE,
  slot timestamptz NOT NULL,
  addr_hash bytea NOT NULL CHECK (octet_length(addr_hash) = 16),
  PRIMARY KEY (license_id, slot, addr_hash)
);
CREATE INDEX activity_addresses_slot ON activity_addresses (slot);
CREATE TABLE activity_devices (
  license_id text NOT NULL REFERENCES licenses (id) ON DELETE CASCADE,
  slot timestamptz NOT NULL,
  device text NOT NULL CHECK (device ~ '^[A-Za-z0-9_-]{22}$'),
  PRIMARY KEY (license_id, slot, device)
);
CREATE INDEX activity_devices_slot ON activity_devices (slot);

CREATE FUNCTION iki_activity_add(p_license text, p_at timestamptz, p_kind text, p_addr bytea, p_device text)
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  s timestamptz := date_bin('15 minutes', p_at, timestamptz '2000-01-01 00:00:00+00');
BEGIN
  IF p_kind NOT IN (${ACTIVITY_KINDS.map((k) => `'${k}'`).join(', ')}) THEN
    RAISE EXCEPTION 'iki_activity_add: unknown kind %', p_kind;
  END IF;
  INSERT INTO activity_slots AS a (license_id, slot, releases, downloads, resumes, refused_rate_limited,
    refused_revoked, refused_expired, refused_suspended, refused_not_licensee)
  VALUES (p_license, s, (p_kind = 'release')::int, (p_kind = 'download')::int, (p_kind = 'resume')::int,
    (p_kind = 'rate_limited')::int, (p_kind = 'revoked')::int, (p_kind = 'expired')::int,
    (p_kind = 'suspended')::int, (p_kind = 'not_licensee')::int)
  ON CONFLICT (license_id, slot) DO UPDATE SET releases = a.releases + EXCLUDED.releases,
    downloads = a.downloads + EXCLUDED.downloads, resumes = a.resumes + EXCLUDED.resumes,
    refused_rate_limited = a.refused_rate_limited + EXCLUDED.refused_rate_limited,
    refused_revoked = a.refused_revoked + EXCLUDED.refused_revoked,
    refused_expired = a.refused_expired + EXCLUDED.refused_expired,
    refused_suspended = a.refused_suspended + EXCLUDED.refused_suspended,
    refused_not_licensee = a.refused_not_licensee + EXCLUDED.refused_not_licensee;
  IF p_addr IS NOT NULL THEN
    INSERT INTO activity_addresses (license_id, slot, addr_hash) VALUES (p_license, s, p_addr) ON CONFLICT DO NOTHING;
  END IF;
  IF p_device IS NOT NULL THEN
    INSERT INTO activity_devices (license_id, slot, device) VALUES (p_license, s, p_device) ON CONFLICT DO NOTHING;
  END IF;
END $$;
`;

/**
 * Migration 46: the flags (storage/flags-records.ts) and the `license.flagged` webhook event.
 * A flag's `flag` event is queued for the seller's endpoints by a trigger of its own, which
 * fires only for that kind (its WHEN clause costs the other events nothing), so that the
 * fan-out of migrations 33 and 35 (and any later change to it) stays as it is.
 */
const FLAGS = `
CREATE TABLE activity_flags (
  id text PRIMARY KEY CHECK (id ~ '^fl_[0-9a-f]{24}$'),
  seq bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
  license_id text NOT NULL REFERENCES licenses (id) ON DELETE CASCADE,
  master_id text NOT NULL,
  seller_id text NOT NULL,
  rule text NOT NULL CHECK (rule IN ('rate_limit', 'addresses', 'devices', 'scripted')),
  window_start timestamptz NOT NULL,
  window_end timestamptz NOT NULL,
  value double precision NOT NULL,
  threshold double precision NOT NULL,
  raised_at timestamptz NOT NULL,
  dismissed_at timestamptz,
  dismissed_by text,
  UNIQUE (license_id, rule, window_start)
);
CREATE INDEX activity_flags_seller ON activity_flags (seller_id, seq DESC);
CREATE INDEX activity_flags_open ON activity_flags (license_id) WHERE dismissed_at IS NULL;

CREATE FUNCTION iki_flag_fanout() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  seller text;
BEGIN
  SELECT m.seller_id INTO seller FROM masters m WHERE m.id = NEW.master_id;
  IF NOT FOUND THEN RETURN NULL; END IF;
  INSERT INTO webhook_outbox (event_id, endpoint_id, type, occurred_at, data, next_attempt_at)
    SELECT x.evt, e.id, 'license.flagged', NEW.at, jsonb_build_object('masterId', NEW.master_id, 'licenseId', NEW.license_id,
      'actorId', NEW.actor_id, 'details', NEW.details), NEW.at
    FROM webhook_endpoints e, (SELECT 'evt_' || replace(gen_random_uuid()::text, '-', '') AS evt) x
    WHERE e.seller_id = seller AND e.disabled_at IS NULL AND 'license.flagged' = ANY (e.events);
  RETURN NULL;
END $$;
CREATE TRIGGER events_webhooks_flagged AFTER INSERT ON events FOR EACH ROW WHEN (NEW.kind = 'flag')
  EXECUTE FUNCTION iki_flag_fanout();
`;

/** Versions 45 to 49. */
export const ACTIVITY_MIGRATIONS: readonly Migration[] = [
  {
    version: 45,
    name: 'activity per license and quarter hour: releases, downloads, refusals, address prefixes, devices',
    sql: `${ACTIVITY_TABLES}
${RELEASE_WITH_ACTIVITY}`,
  },
  {
    version: 46,
    name: 'flags on licenses and the license.flagged webhook event',
    sql: FLAGS,
  },
];
