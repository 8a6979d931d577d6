/**
 * Versioned schema migrations, applied at start in order, each in its own transaction and
 * recorded in `schema_migrations`. An advisory lock keeps two instances starting at once from
 * applying the same migration twice. Migrations are append-only: a released one never changes.
 */
import { RELEASE_AT_CONSTANT_COST } from './release-migration.js';
import { FANOUT_EARLY_RETURN } from './fanout-migration.js';
import { SELL_MIGRATIONS } from './migrations-sell.js';
import { ACTIVITY_MIGRATIONS } from './migrations-activity.js';
import type { SqlDb } from './sql-db.js';

/** One schema step. */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/** Every migration, in order. */
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'accounts, keys, masters, licenses, events, releases',
    sql: `
CREATE TABLE accounts (
  id text PRIMARY KEY,
  email text NOT NULL,
  email_verified boolean NOT NULL DEFAULT false,
  password_hash text,
  name text NOT NULL,
  external_issuer text,
  external_subject text,
  created_at timestamptz NOT NULL,
  CHECK ((external_issuer IS NULL) = (external_subject IS NULL))
);
CREATE UNIQUE INDEX accounts_local_email ON accounts (email) WHERE external_issuer IS NULL;
CREATE UNIQUE INDEX accounts_external ON accounts (external_issuer, external_subject)
  WHERE external_issuer IS NOT NULL;
CREATE INDEX accounts_email ON accounts (email);

CREATE TABLE email_verifications (
  token_hash text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  expires_at timestamptz NOT NULL
);

CREATE TABLE signing_keys (
  public_key text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id),
  name text NOT NULL,
  created_at timestamptz NOT NULL,
  revoked_at timestamptz
);
CREATE INDEX signing_keys_account ON signing_keys (account_id);

CREATE TABLE masters (
  id text PRIMARY KEY,
  seller_id text NOT NULL REFERENCES accounts (id),
  name text NOT NULL,
  sha256 text NOT NULL CHECK (sha256 ~ '^[0-9a-f]{64}$'),
  size bigint NOT NULL CHECK (size >= 0),
  entries integer NOT NULL,
  textures integer NOT NULL,
  signer_public_key text NOT NULL,
  created_at timestamptz NOT NULL
);
CREATE INDEX masters_seller ON masters (seller_id, created_at DESC);

CREATE TABLE licenses (
  id text PRIMARY KEY CHECK (id ~ '^[0-9a-f]{16}$'),
  master_id text NOT NULL REFERENCES masters (id),
  licensee_id text NOT NULL REFERENCES accounts (id),
  issued_at timestamptz NOT NULL,
  revoked_at timestamptz,
  release_count integer NOT NULL DEFAULT 0
);
CREATE INDEX licenses_master ON licenses (master_id, issued_at DESC);
CREATE INDEX licenses_licensee ON licenses (licensee_id, issued_at DESC);

CREATE TABLE events (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  at timestamptz NOT NULL,
  kind text NOT NULL,
  actor_id text NOT NULL,
  master_id text NOT NULL,
  license_id text,
  details jsonb NOT NULL DEFAULT '{}'
);
CREATE INDEX events_license ON events (license_id, id DESC);

CREATE TABLE key_releases (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  license_id text NOT NULL REFERENCES licenses (id),
  account_id text NOT NULL REFERENCES accounts (id),
  released_at timestamptz NOT NULL
);
CREATE INDEX key_releases_license ON key_releases (license_id, released_at);
CREATE INDEX key_releases_account ON key_releases (account_id, released_at);
`,
  },
  {
    version: 2,
    name: 'master blobs inside PostgreSQL, one row per container chunk',
    sql: `
CREATE TABLE blob_chunks (
  blob_id text NOT NULL,
  seq integer NOT NULL,
  bytes bytea NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (blob_id, seq)
);
`,
  },
  {
    version: 3,
    name: 'failed sign-ins for the sign-in limiter',
    sql: `
CREATE TABLE sign_in_failures (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  address_hash text NOT NULL CHECK (address_hash ~ '^[0-9a-f]{64}$'),
  client_ip text NOT NULL,
  failed_at timestamptz NOT NULL
);
CREATE INDEX sign_in_failures_address ON sign_in_failures (address_hash, failed_at);
CREATE INDEX sign_in_failures_client ON sign_in_failures (client_ip, failed_at);
CREATE INDEX sign_in_failures_at ON sign_in_failures (failed_at);
`,
  },
  {
    version: 4,
    name: 'verification-mail requests for the mail limiter; one outstanding verification link per account',
    sql: `
CREATE TABLE mail_requests (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  address_hash text NOT NULL CHECK (address_hash ~ '^[0-9a-f]{64}$'),
  client_ip text NOT NULL,
  requested_at timestamptz NOT NULL
);
CREATE INDEX mail_requests_address ON mail_requests (address_hash, requested_at);
CREATE INDEX mail_requests_client ON mail_requests (client_ip, requested_at);
CREATE INDEX mail_requests_at ON mail_requests (requested_at);
CREATE INDEX email_verifications_account ON email_verifications (account_id);
`,
  },
  {
    version: 5,
    name: 'usage limits of uploads, copies and identify; masters\' texture bound; licensee names frozen at issue',
    // The texture bound of a master stored before this migration stays NULL until identify
    // first needs it and reads it from the master (services/licenses.ts). The name frozen into
    // an existing license is its licensee's name now, the name its copies carried so far.
    sql: `
CREATE TABLE usage_actions (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  kind text NOT NULL CHECK (kind IN ('upload', 'copy', 'identify')),
  account_id text NOT NULL REFERENCES accounts (id),
  license_id text REFERENCES licenses (id),
  started_at timestamptz NOT NULL,
  hold_until timestamptz
);
CREATE INDEX usage_actions_account ON usage_actions (account_id, kind, started_at);
CREATE INDEX usage_actions_license ON usage_actions (license_id, kind, started_at) WHERE license_id IS NOT NULL;
CREATE INDEX usage_actions_started ON usage_actions (kind, started_at);

ALTER TABLE masters ADD COLUMN texture_max_side integer CHECK (texture_max_side >= 0),
  ADD COLUMN texture_max_pixels bigint CHECK (texture_max_pixels >= 0),
  ADD CONSTRAINT masters_texture_bound CHECK ((texture_max_side IS NULL) = (texture_max_pixels IS NULL));

ALTER TABLE licenses ADD COLUMN licensee_name text;
UPDATE licenses SET licensee_name = accounts.name FROM accounts WHERE accounts.id = licenses.licensee_id;
ALTER TABLE licenses ALTER COLUMN licensee_name SET NOT NULL;
`,
  },
  {
    version: 6,
    name: 'pending sign-ups, sessions with refresh tokens, password resets, license creations counted',
    // A sign-up is pending until its link is used (issue 15 item 1): the password chosen takes
    // effect only then. Local accounts left unverified by earlier versions stay, cannot sign
    // in, and are taken over by whoever uses a newer sign-up's link or a reset link for the
    // address (both prove the mailbox).
    sql: `
CREATE TABLE pending_sign_ups (
  token_hash text PRIMARY KEY CHECK (token_hash ~ '^[0-9a-f]{64}$'),
  email text NOT NULL,
  name text NOT NULL,
  password_hash text NOT NULL,
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL
);
CREATE UNIQUE INDEX pending_sign_ups_email ON pending_sign_ups (email);
CREATE INDEX pending_sign_ups_expires ON pending_sign_ups (expires_at);

CREATE TABLE sessions (
  id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  refresh_hash text NOT NULL UNIQUE CHECK (refresh_hash ~ '^[0-9a-f]{64}$'),
  device text NOT NULL,
  created_at timestamptz NOT NULL,
  last_used_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  revoked_at timestamptz
);
CREATE INDEX sessions_account ON sessions (account_id, last_used_at DESC);

CREATE TABLE password_resets (
  token_hash text PRIMARY KEY CHECK (token_hash ~ '^[0-9a-f]{64}$'),
  account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  expires_at timestamptz NOT NULL
);
CREATE INDEX password_resets_account ON password_resets (account_id);

CREATE TABLE license_creations (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  address_hash text NOT NULL,
  client_ip text NOT NULL,
  created_at timestamptz NOT NULL
);
CREATE INDEX license_creations_address ON license_creations (address_hash, created_at);
CREATE INDEX license_creations_client ON license_creations (client_ip, created_at);
CREATE INDEX license_creations_at ON license_creations (created_at);
`,
  },
  {
    version: 7,
    name: 'key release in one statement; resumed copy downloads; copy sizes; retention indexes; masters share the blob of identical bytes',
    // iki_release_key: the key-release limiter of sql-repository.ts in one round trip. A
    // PL/pgSQL function takes a new snapshot for each statement (READ COMMITTED), so the counts
    // taken after the row locks see every release committed by the previous holder, as the
    // separate statements of a transaction did; one SQL statement alone would count with the
    // snapshot taken before it waited for the locks.
    sql: `
CREATE FUNCTION iki_release_key(p_license text, p_account text, p_now timestamptz, p_since timestamptz,
  p_per_license integer, p_per_user integer,
  OUT outcome text, OUT release_count integer, OUT by_license timestamptz[], OUT by_user timestamptz[])
LANGUAGE plpgsql AS $$
DECLARE
  lic record;
BEGIN
  -- Lock order: account, then license (as every limiter of this schema).
  PERFORM 1 FROM accounts WHERE id = p_account FOR UPDATE;
  SELECT l.id, l.master_id, l.licensee_id, l.revoked_at, l.release_count INTO lic
    FROM licenses l WHERE l.id = p_license FOR UPDATE;
  IF NOT FOUND OR lic.licensee_id <> p_account THEN outcome := 'not_found'; RETURN; END IF;
  IF lic.revoked_at IS NOT NULL THEN outcome := 'revoked'; RETURN; END IF;
  SELECT coalesce(array_agg(released_at ORDER BY released_at, id), '{}') INTO by_license
    FROM key_releases WHERE license_id = p_license AND released_at > p_since;
  SELECT coalesce(array_agg(released_at ORDER BY released_at, id), '{}') INTO by_user
    FROM key_releases WHERE account_id = p_account AND released_at > p_since;
  IF cardinality(by_license) >= p_per_license OR cardinality(by_user) >= p_per_user THEN
    outcome := 'limited'; release_count := lic.release_count; RETURN;
  END IF;
  INSERT INTO key_releases (license_id, account_id, released_at) VALUES (p_license, p_account, p_now);
  UPDATE licenses SET release_count = licenses.release_count + 1 WHERE id = p_license
    RETURNING licenses.release_count INTO release_count;
  INSERT INTO events (at, kind, actor_id, master_id, license_id, details)
    VALUES (p_now, 'release', p_account, lic.master_id, p_license, '{}');
  outcome := 'granted';
END $$;

ALTER TABLE usage_actions ADD COLUMN resumed boolean NOT NULL DEFAULT false;
ALTER TABLE licenses ADD COLUMN copy_bytes bigint CHECK (copy_bytes > 0);
CREATE INDEX key_releases_at ON key_releases (released_at);
CREATE INDEX events_at ON events (at);
-- A master whose bytes another master already stores (same SHA-256) points at that blob.
ALTER TABLE masters ADD COLUMN blob_id text;
CREATE INDEX masters_sha256 ON masters (sha256);
`,
  },
  {
    version: 9,
    name: 'archived masters',
    // An archived master is kept (its licenses, copies and history go on) but takes no new
    // license; NULL is not archived, so every existing master stays as it was.
    sql: `ALTER TABLE masters ADD COLUMN archived_at timestamptz;`,
  },
  {
    version: 10,
    name: 'key release with its session check in one statement, counting at most the limit',
    // iki_release: iki_release_key of migration 7, plus, when given the caller's session (the
    // access token's: not revoked, not expired, of this account), that session and the
    // account's verified address, so a
    // release is one round trip with nothing checked before it; and instead of every release
    // time of the window it reads, from the (license_id, released_at) and (account_id,
    // released_at) indexes, at most the newest `limit` of them: how many (capped at the limit)
    // and the oldest of those (window.ts WindowCount), so a release's cost does not grow with
    // the releases before it. Row locks are FOR NO KEY UPDATE (the foreign keys of the rows
    // inserted take KEY SHARE, which this does not block); only releases of one account, or of
    // one license, wait for each other.
    sql: `
CREATE FUNCTION iki_release(p_session text, p_license text, p_account text, p_now timestamptz,
  p_since timestamptz, p_per_license integer, p_per_user integer,
  OUT outcome text, OUT release_count integer, OUT master_id text,
  OUT license_used integer, OUT license_first timestamptz, OUT user_used integer, OUT user_first timestamptz)
LANGUAGE plpgsql AS $$
DECLARE
  lic record;
  verified boolean;
BEGIN
  IF p_session IS NOT NULL THEN
    PERFORM 1 FROM sessions s WHERE s.id = p_session AND s.account_id = p_account
      AND s.revoked_at IS NULL AND s.expires_at > p_now;
    IF NOT FOUND THEN outcome := 'unauthenticated'; RETURN; END IF;
  END IF;
  -- Lock order: account, then license (as every limiter of this schema).
  SELECT a.email_verified INTO verified FROM accounts a WHERE a.id = p_account FOR NO KEY UPDATE;
  IF p_session IS NOT NULL AND NOT FOUND THEN outcome := 'unauthenticated'; RETURN; END IF;
  IF p_session IS NOT NULL AND NOT verified THEN outcome := 'unverified'; RETURN; END IF;
  SELECT l.id, l.master_id, l.licensee_id, l.revoked_at, l.release_count INTO lic
    FROM licenses l WHERE l.id = p_license FOR NO KEY UPDATE;
  IF NOT FOUND OR lic.licensee_id <> p_account THEN outcome := 'not_found'; RETURN; END IF;
  master_id := lic.master_id;
  IF lic.revoked_at IS NOT NULL THEN outcome := 'revoked'; RETURN; END IF;
  SELECT count(*)::integer, min(k.released_at) INTO license_used, license_first FROM (
    SELECT r.released_at FROM key_releases r WHERE r.license_id = p_license AND r.released_at > p_since
    ORDER BY r.released_at DESC LIMIT greatest(p_per_license, 1)) k;
  SELECT count(*)::integer, min(k.released_at) INTO user_used, user_first FROM (
    SELECT r.released_at FROM key_releases r WHERE r.account_id = p_account AND r.released_at > p_since
    ORDER BY r.released_at DESC LIMIT greatest(p_per_user, 1)) k;
  IF license_used >= p_per_license OR user_used >= p_per_user THEN
    outcome := 'limited'; release_count := lic.release_count; RETURN;
  END IF;
  INSERT INTO key_releases (license_id, account_id, released_at) VALUES (p_license, p_account, p_now);
  UPDATE licenses SET release_count = licenses.release_count + 1 WHERE id = p_license
    RETURNING licenses.release_count INTO release_count;
  INSERT INTO events (at, kind, actor_id, master_id, license_id, details)
    VALUES (p_now, 'release', p_account, lic.master_id, p_license, '{}');
  outcome := 'granted';
END $$;
`,
  },
  {
    version: 11,
    name: 'drop iki_release_key',
    // Replaced by iki_release (migration 10); nothing calls it any more.
    sql: `DROP FUNCTION IF EXISTS iki_release_key(text, text, timestamptz, timestamptz, integer, integer);`,
  },
  {
    version: 12,
    name: 'the sign-up browser proof of pending sign-ups',
    // Issue 22 item 3: a pending sign-up's password takes effect only with the proof the
    // browser that signed up holds (SHA-256 of its cookie). Rows from before have none, so
    // their links ask for a password, which is what the person at the link then chooses.
    sql: `ALTER TABLE pending_sign_ups ADD COLUMN proof_hash text CHECK (proof_hash ~ '^[0-9a-f]{64}$');`,
  },
  {
    version: 13,
    name: 'the address a license was issued to by e-mail',
    // Issue 22 item 6: the seller sees a licensee's address only when they licensed by it.
    // Licenses from before have none: how they were made is not known, so none is shown.
    sql: `ALTER TABLE licenses ADD COLUMN licensee_email text;`,
  },
  {
    version: 14,
    name: 'retired refresh tokens',
    // Issue 22 item 8: every refresh replaces the session's refresh token; the old one's hash
    // is kept here so that its reuse (a stolen copy, RFC 9700 §4.14.2) ends the session. The
    // rows go with their session (pruned with it, item 9).
    sql: `
CREATE TABLE retired_refresh_tokens (
  refresh_hash text PRIMARY KEY CHECK (refresh_hash ~ '^[0-9a-f]{64}$'),
  session_id text NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
  retired_at timestamptz NOT NULL
);
CREATE INDEX retired_refresh_tokens_session ON retired_refresh_tokens (session_id);
`,
  },
  {
    version: 15,
    name: 'finding ended sessions to prune',
    // Issue 22 item 9: ended (revoked or expired) sessions are deleted in small batches at
    // each sign-in; these indexes find them without reading the table.
    sql: `
CREATE INDEX sessions_expires ON sessions (expires_at);
CREATE INDEX sessions_revoked ON sessions (revoked_at) WHERE revoked_at IS NOT NULL;
`,
  },
  {
    version: 20,
    name: 'readiness probe writes',
    // `/readyz` writes one row per instance (ops/probes.ts): a database that cannot take a
    // write (full, read-only, a standby) is not ready. Nothing else reads it.
    sql: `CREATE TABLE readiness_probe (instance_id text PRIMARY KEY, checked_at timestamptz NOT NULL);`,
  },
  {
    version: 21,
    name: 'key release at a cost that does not grow with the releases in the window',
    sql: RELEASE_AT_CONSTANT_COST,
  },
  ...SELL_MIGRATIONS,
  {
    version: 40,
    name: 'a resumed copy download continues a recorded cut download: its ETag and how far it got',
    // Issue 22 item 5 (storage/usage-window.ts resumeParent). Downloads recorded before this
    // have no ETag, so nothing resumes them: a range asked for after it counts as a download.
    sql: `
ALTER TABLE usage_actions ADD COLUMN etag text,
  ADD COLUMN sent_to bigint NOT NULL DEFAULT 0 CHECK (sent_to >= 0),
  ADD COLUMN complete boolean NOT NULL DEFAULT false,
  ADD COLUMN parent_id bigint;
`,
  },
  {
    version: 41,
    name: 'copy sizes recomputed after the copy format 1.1',
    // Issue 28: chunks that do not compress are stored since COPY_FORMAT_VERSION 1.1
    // (services/license-copies.ts), so a copy's size can differ from the one kept with its
    // license; the next download measures it again (a range before that is answered whole).
    sql: `UPDATE licenses SET copy_bytes = NULL;`,
  },
  {
    version: 42,
    name: 'the webhook fan-out returns early for a seller without endpoints',
    // Issue 28 item 1 (storage/fanout-migration.ts): every key release writes an event, and
    // the trigger no longer prepares an outbox insert when no endpoint would take it.
    sql: FANOUT_EARLY_RETURN,
  },
  ...ACTIVITY_MIGRATIONS,
  {
    version: 47,
    name: 'copy sizes recomputed after the copy format 1.2',
    // Issue 28 item 3: since COPY_FORMAT_VERSION 1.2 each chunk of a copy follows the master's
    // verdict for it (libraries' DeflateHint), so a copy's size can differ from the one kept
    // with its license, as after migration 41.
    sql: `UPDATE licenses SET copy_bytes = NULL;`,
  },
  {
    version: 48,
    name: 'copy sizes recomputed after the copy format 1.3',
    // Issue 28 item 3: since COPY_FORMAT_VERSION 1.3 the marked rgba8 chunks a master deflated
    // to under an eighth go to the pixel encoder (libraries' DeflateHint::Pixels), so a copy's
    // size can differ from the one kept with its license, as after migrations 41 and 47.
    sql: `UPDATE licenses SET copy_bytes = NULL;`,
  },
];

/** Arbitrary constant naming the migration advisory lock. */
const MIGRATION_LOCK_KEY = 0x696b69;

/** Applies every migration not yet recorded; returns the versions applied now. */
export async function migrate(db: SqlDb, migrations: readonly Migration[] = MIGRATIONS): Promise<number[]> {
  const applied: number[] = [];
  for (const migration of migrations) {
    const done = await db.transaction(async (tx) => {
      // The lock comes first: nothing touches the schema, not even the creation of
      // schema_migrations, before it is held (two instances starting at once on a new database
      // would otherwise race on that CREATE).
      // As a script: waiting for another instance's migrations is not bounded by the query
      // timeout of requests (sql-db.ts MAINTENANCE_TIMEOUT_MS).
      await tx.exec(`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK_KEY})`);
      await tx.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
        version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
      const found = await tx.query('SELECT 1 FROM schema_migrations WHERE version = $1', [migration.version]);
      if (found.rows.length > 0) return false;
      await tx.exec(migration.sql);
      await tx.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)',
        [migration.version, migration.name]);
      return true;
    });
    if (done) applied.push(migration.version);
  }
  return applied;
}
