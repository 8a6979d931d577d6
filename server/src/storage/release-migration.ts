/**
 * Migration 21 (issue 23 item 5): `iki_release` at a cost that does not grow with the number
 * of releases in the window. Migration 10 read up to `limit` release times of each scope from
 * its index, so with raised limits a release read thousands of rows (PostgreSQL CPU per release
 * 1.9 -> 6.8 ms over 50 s of one license).
 *
 * Every release now carries its ordinal within its license (`license_seq`) and within its
 * account (`account_seq`), and release times are non-decreasing in that order: a release is
 * recorded at `greatest(now, the newest time of its license, the newest time of its account)`
 * (under both row locks, so the newest is stable). The releases of a scope inside the window
 * are then exactly a suffix of its ordinals, and their count is
 * `newest ordinal - ordinal of the oldest one in the window + 1`: two index probes per scope
 * (the newest row, the oldest row after the window's start) whatever the window holds. The
 * limits stay exact sliding windows over the recorded times; a recorded time is later than
 * its `now` only by the few milliseconds a release waited behind another of the same license
 * or account (or by the clock skew between instances), which can only make a limit count a
 * release for longer, never grant more than the limit.
 *
 * The oldest of the newest `limit` (window.ts `WindowCount.first`) is the oldest in the window
 * unless the window holds more than `limit` releases, which happens only after a limit was
 * lowered; then it is found by skipping the surplus (a cost in that surplus, once per window).
 * Pruning (`pruneHistory`) deletes the oldest rows; the ordinals of what is left stay valid.
 */
export const RELEASE_AT_CONSTANT_COST = `
ALTER TABLE key_releases ADD COLUMN license_seq bigint, ADD COLUMN account_seq bigint;
UPDATE key_releases k SET license_seq = s.ls, account_seq = s.acs FROM (
  SELECT id, row_number() OVER (PARTITION BY license_id ORDER BY released_at, id) AS ls,
    row_number() OVER (PARTITION BY account_id ORDER BY released_at, id) AS acs FROM key_releases) s
  WHERE s.id = k.id;
ALTER TABLE key_releases ALTER COLUMN license_seq SET NOT NULL, ALTER COLUMN account_seq SET NOT NULL;
DROP INDEX key_releases_license;
DROP INDEX key_releases_account;
CREATE INDEX key_releases_license ON key_releases (license_id, released_at, license_seq);
CREATE INDEX key_releases_account ON key_releases (account_id, released_at, account_seq);

DROP FUNCTION iki_release(text, text, text, timestamptz, timestamptz, integer, integer);
CREATE FUNCTION iki_release(p_session text, p_license text, p_account text, p_now timestamptz,
  p_since timestamptz, p_per_license integer, p_per_user integer,
  OUT outcome text, OUT release_count integer, OUT master_id text,
  OUT license_used integer, OUT license_first timestamptz, OUT user_used integer, OUT user_first timestamptz,
  OUT recorded_at timestamptz)
LANGUAGE plpgsql AS $$
DECLARE
  lic record;
  verified boolean;
  l_last record;
  u_last record;
  l_first record;
  u_first record;
  l_cap integer := greatest(p_per_license, 1);
  u_cap integer := greatest(p_per_user, 1);
  l_in bigint := 0;
  u_in bigint := 0;
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
  -- Per scope: the newest release, and the oldest inside the window (two index probes).
  SELECT r.license_seq AS seq, r.released_at AS at INTO l_last FROM key_releases r WHERE r.license_id = p_license
    ORDER BY r.released_at DESC, r.license_seq DESC LIMIT 1;
  SELECT r.license_seq AS seq, r.released_at AS at INTO l_first FROM key_releases r
    WHERE r.license_id = p_license AND r.released_at > p_since ORDER BY r.released_at, r.license_seq LIMIT 1;
  SELECT r.account_seq AS seq, r.released_at AS at INTO u_last FROM key_releases r WHERE r.account_id = p_account
    ORDER BY r.released_at DESC, r.account_seq DESC LIMIT 1;
  SELECT r.account_seq AS seq, r.released_at AS at INTO u_first FROM key_releases r
    WHERE r.account_id = p_account AND r.released_at > p_since ORDER BY r.released_at, r.account_seq LIMIT 1;
  IF l_first.seq IS NOT NULL THEN l_in := l_last.seq - l_first.seq + 1; END IF;
  IF u_first.seq IS NOT NULL THEN u_in := u_last.seq - u_first.seq + 1; END IF;
  license_used := least(l_in, l_cap);
  user_used := least(u_in, u_cap);
  license_first := l_first.at;
  user_first := u_first.at;
  -- More in the window than the limit (a lowered limit): the oldest of the newest \`limit\`.
  IF l_in > l_cap THEN
    SELECT r.released_at INTO license_first FROM key_releases r WHERE r.license_id = p_license
      AND r.released_at > p_since ORDER BY r.released_at, r.license_seq OFFSET l_in - l_cap LIMIT 1;
  END IF;
  IF u_in > u_cap THEN
    SELECT r.released_at INTO user_first FROM key_releases r WHERE r.account_id = p_account
      AND r.released_at > p_since ORDER BY r.released_at, r.account_seq OFFSET u_in - u_cap LIMIT 1;
  END IF;
  IF license_used >= p_per_license OR user_used >= p_per_user THEN
    outcome := 'limited'; release_count := lic.release_count; RETURN;
  END IF;
  recorded_at := greatest(p_now, l_last.at, u_last.at);
  INSERT INTO key_releases (license_id, account_id, released_at, license_seq, account_seq)
    VALUES (p_license, p_account, recorded_at, coalesce(l_last.seq, 0) + 1, coalesce(u_last.seq, 0) + 1);
  UPDATE licenses SET release_count = licenses.release_count + 1 WHERE id = p_license
    RETURNING licenses.release_count INTO release_count;
  INSERT INTO events (at, kind, actor_id, master_id, license_id, details)
    VALUES (p_now, 'release', p_account, lic.master_id, p_license, '{}');
  outcome := 'granted';
END $$;
`;
