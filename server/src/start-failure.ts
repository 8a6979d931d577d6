/**
 * The one stderr line `iki serve` (and `node server/dist/main.js`) prints when the service
 * cannot start, in the CLI's form `iki: <CODE>: <message>` (ts/src/cli/errors.ts), saying what
 * to do next: a port already in use or not allowed, a refused configuration, anything else.
 */
import { ConfigError } from './config.js';

/** The line (newline included) for a start failure `err`. */
export function startFailureLine(err: unknown): string {
  const e = err as (NodeJS.ErrnoException & { address?: string; port?: number }) | undefined;
  const where = e?.port === undefined ? 'the port' : `port ${e.port}${e.address === undefined ? '' : ` on ${e.address}`}`;
  if (e?.code === 'EADDRINUSE') {
    return `iki: EADDRINUSE: ${where} is already in use (another iki service?); stop that one, or choose another port with --port N (or IKI_PORT=N)\n`;
  }
  if (e?.code === 'EACCES') {
    return `iki: EACCES: not allowed to listen on ${where} (ports below 1024 need privileges); choose another port with --port N (or IKI_PORT=N)\n`;
  }
  if (e?.code === 'EADDRNOTAVAIL') {
    return `iki: EADDRNOTAVAIL: ${where}: this machine has no such address; check IKI_HOST\n`;
  }
  if (err instanceof ConfigError) {
    return `iki: CONFIG_INVALID: ${err.problems.join('; ')}; fix the environment (settings: server/README.md)\n`;
  }
  const message = (err instanceof Error ? err.message : String(err)).replace(/\s*\n\s*/gu, ' ');
  const code = typeof e?.code === 'string' && /^[A-Z][A-Z0-9_]+$/u.test(e.code) ? e.code : 'START_FAILED';
  return `iki: ${code}: ${message}\n`;
}
