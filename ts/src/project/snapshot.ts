/**
 * The document snapshot of a project (docs/format.md section 5.1): UTF-8 JSON, an object,
 * within {@link MAX_SNAPSHOT_BYTES}. It is data and only data: parsed with `JSON.parse` (no
 * code runs), keys that could reach an object's prototype when an app merges the snapshot
 * (`__proto__`) are dropped, and strings are kept exactly as written, so markup inside them
 * stays text for the app to show as text.
 */
import { ProjectError } from './errors.js';

/**
 * Largest snapshot read or written: 32 MiB of JSON. A snapshot describes the document
 * (layers, positions, text); images and sounds are assets. 32 MiB is far above any editor's
 * document of this kind and bounds what a crafted file can make a page parse and hold.
 */
export const MAX_SNAPSHOT_BYTES = 32 * 1024 * 1024;

/** Path and media type of the snapshot entry (docs/format.md section 5.1). */
export const SNAPSHOT_PATH = 'snapshot.json';
export const SNAPSHOT_TYPE = 'application/x-iki-snapshot';

/** Throws `BAD_SNAPSHOT` when `size` bytes is above the limit; before anything is read. */
export function checkSnapshotSize(size: number): void {
  if (size > MAX_SNAPSHOT_BYTES) {
    throw new ProjectError('BAD_SNAPSHOT', `the snapshot is ${size} bytes, above the limit of ${MAX_SNAPSHOT_BYTES}`,
      { reason: 'too large', value: size, max: MAX_SNAPSHOT_BYTES });
  }
}

/** The snapshot's bytes: a JSON object serialised, or UTF-8 JSON given as bytes (checked). */
export function snapshotBytes(snapshot: unknown): Uint8Array {
  const bytes = snapshot instanceof Uint8Array ? snapshot : new TextEncoder().encode(serialise(snapshot));
  checkSnapshotSize(bytes.length);
  parseSnapshot(bytes);
  return bytes;
}

function serialise(snapshot: unknown): string {
  if (typeof snapshot !== 'object' || snapshot === null || Array.isArray(snapshot)) {
    throw new ProjectError('BAD_SNAPSHOT', 'the snapshot must be a JSON object', { reason: 'not an object' });
  }
  try {
    return JSON.stringify(snapshot);
  } catch (error) {
    throw new ProjectError('BAD_SNAPSHOT', `the snapshot cannot be written as JSON (${(error as Error).message})`, { reason: 'not JSON' });
  }
}

/** Parses snapshot bytes into a fresh object; `BAD_SNAPSHOT` unless they are a JSON object within the limit. */
export function parseSnapshot(bytes: Uint8Array): Record<string, unknown> {
  checkSnapshotSize(bytes.length);
  let value: unknown;
  try {
    const text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes);
    value = JSON.parse(text, (key, v: unknown) => (key === '__proto__' ? undefined : v));
  } catch (error) {
    // Invalid UTF-8, invalid JSON, or nesting deep enough to exhaust the parser's stack.
    throw new ProjectError('BAD_SNAPSHOT', `the snapshot is not valid JSON (${(error as Error).name})`, { reason: 'not JSON' });
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ProjectError('BAD_SNAPSHOT', 'the snapshot is not a JSON object', { reason: 'not an object' });
  }
  return value as Record<string, unknown>;
}
