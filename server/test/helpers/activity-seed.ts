/**
 * A realistic activity history for tests and pages (issue 29): for each license, a month of
 * key releases with a daily rhythm, a few downloads, the odd refusal, one to three address
 * prefixes and one or two devices; a few licenses are much busier than the rest, one is
 * shared (many prefixes and devices) and one is scripted (the same count every hour, day and
 * night). Written straight into migration 45's quarter-hour tables in a handful of
 * statements (50 licenses x 30 days in well under a second), deterministic for a seed, and
 * the totals are returned so that a test can compare what the API or a page shows.
 *
 * The licenses must exist (their ids are given); nothing else is touched (release counts on
 * the licenses stay as they are).
 */
import { createHash } from 'node:crypto';
import type { SqlQueryable } from '../../src/storage/sql-db.js';

/** Options of `seedActivity`. */
export interface SeedOptions {
  licenseIds: readonly string[];
  /** Days of history ending at `now` (30 by default). */
  days?: number;
  /** The end of the history (now by default); quarter hours after it are left empty. */
  now?: Date;
  /** Seed of the pseudo-random history (1 by default). */
  seed?: number;
}

/** What was seeded, per license id. */
export interface SeededTotals {
  releases: number;
  downloads: number;
  refusals: number;
  /** Distinct address prefixes over the whole history. */
  addresses: number;
  devices: number;
}

const SLOT_MS = 15 * 60 * 1000;

/** A small deterministic generator (mulberry32). */
function generator(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A made-up 16-byte prefix hash (the real ones are keyed HMACs; these are only distinct). */
const fakePrefix = (license: string, n: number): Buffer =>
  createHash('sha256').update(`seed-prefix/${license}/${n}`).digest().subarray(0, 16);
const fakeDevice = (license: string, n: number): string =>
  createHash('sha256').update(`seed-device/${license}/${n}`).digest('base64url').slice(0, 22);

interface Rows {
  slots: { license: string[]; slot: Date[]; releases: number[]; downloads: number[]; limited: number[] };
  addrs: { license: string[]; slot: Date[]; hash: string[] };
  devices: { license: string[]; slot: Date[]; device: string[] };
}

/** Seeds the history; returns the totals per license id. */
export async function seedActivity(db: SqlQueryable, options: SeedOptions): Promise<Map<string, SeededTotals>> {
  const random = generator(options.seed ?? 1);
  const days = options.days ?? 30;
  const end = Math.floor((options.now ?? new Date()).getTime() / SLOT_MS) * SLOT_MS;
  const start = end - days * 86400_000;
  const rows: Rows = {
    slots: { license: [], slot: [], releases: [], downloads: [], limited: [] },
    addrs: { license: [], slot: [], hash: [] },
    devices: { license: [], slot: [], device: [] },
  };
  const totals = new Map<string, SeededTotals>();
  options.licenseIds.forEach((license, index) => {
    const shared = index === 1;
    const scripted = index === 2;
    // Releases per active hour: a long tail, a few heavy users.
    const rate = scripted ? 4 : Math.max(0.05, -Math.log(1 - random()) * (index < 5 ? 3 : 0.6));
    const prefixes = shared ? 12 : 1 + Math.floor(random() * 3);
    const devices = shared ? 6 : 1 + Math.floor(random() * 2);
    const seenAddrs = new Set<number>();
    const seenDevices = new Set<number>();
    const t: SeededTotals = { releases: 0, downloads: 0, refusals: 0, addresses: 0, devices: 0 };
    for (let slot = start; slot < end; slot += SLOT_MS) {
      const hour = new Date(slot).getUTCHours();
      // Evenings busy, nights quiet; a scripted license every quarter hour alike.
      const rhythm = scripted ? 1 : 0.2 + Math.max(0, Math.sin(((hour - 10) / 24) * 2 * Math.PI)) * 1.6;
      const expected = (rate * rhythm) / 4;
      const releases = scripted ? 1 : Math.floor(expected + random());
      if (releases === 0) continue;
      const downloads = random() < 0.05 ? 1 : 0;
      const limited = random() < 0.01 ? 1 + Math.floor(random() * 3) : 0;
      rows.slots.license.push(license);
      rows.slots.slot.push(new Date(slot));
      rows.slots.releases.push(releases);
      rows.slots.downloads.push(downloads);
      rows.slots.limited.push(limited);
      const addr = Math.floor(random() * prefixes);
      const device = Math.floor(random() * devices);
      rows.addrs.license.push(license);
      rows.addrs.slot.push(new Date(slot));
      rows.addrs.hash.push(fakePrefix(license, addr).toString('hex'));
      rows.devices.license.push(license);
      rows.devices.slot.push(new Date(slot));
      rows.devices.device.push(fakeDevice(license, device));
      seenAddrs.add(addr);
      seenDevices.add(device);
      t.releases += releases;
      t.downloads += downloads;
      t.refusals += limited;
    }
    t.addresses = seenAddrs.size;
    t.devices = seenDevices.size;
    totals.set(license, t);
  });
  await db.query(`INSERT INTO activity_slots (license_id, slot, releases, downloads, refused_rate_limited)
    SELECT * FROM unnest($1::text[], $2::timestamptz[], $3::int[], $4::int[], $5::int[])
    ON CONFLICT (license_id, slot) DO UPDATE SET releases = activity_slots.releases + EXCLUDED.releases,
      downloads = activity_slots.downloads + EXCLUDED.downloads,
      refused_rate_limited = activity_slots.refused_rate_limited + EXCLUDED.refused_rate_limited`,
  [rows.slots.license, rows.slots.slot, rows.slots.releases, rows.slots.downloads, rows.slots.limited]);
  await db.query(`INSERT INTO activity_addresses (license_id, slot, addr_hash)
    SELECT l, s, decode(h, 'hex') FROM unnest($1::text[], $2::timestamptz[], $3::text[]) AS u(l, s, h) ON CONFLICT DO NOTHING`,
  [rows.addrs.license, rows.addrs.slot, rows.addrs.hash]);
  await db.query(`INSERT INTO activity_devices (license_id, slot, device)
    SELECT * FROM unnest($1::text[], $2::timestamptz[], $3::text[]) ON CONFLICT DO NOTHING`,
  [rows.devices.license, rows.devices.slot, rows.devices.device]);
  return totals;
}
