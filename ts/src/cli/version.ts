/** The CLI's version: `@iki/core`'s package version, read once. */
import { readFileSync } from 'node:fs';

let cached: string | undefined;

/** `version` from ts/package.json (`unknown` if it cannot be read). */
export function cliVersion(): string {
  if (cached !== undefined) return cached;
  try {
    const manifest: unknown = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
    const version = (manifest as { version?: unknown }).version;
    cached = typeof version === 'string' ? version : 'unknown';
  } catch {
    cached = 'unknown';
  }
  return cached;
}
