/**
 * `iki serve --port N --data DIR`: runs the licensing service. It spawns @iki/server's built
 * entry point (`server/dist/main.js`, which reads the same flags) in its own process group,
 * forwards Ctrl-C and SIGTERM to it once, and exits with its status, so the service's own
 * graceful shutdown runs exactly as when it is started directly.
 *
 * The service is never left behind (issue 23 item 4): it is spawned with an IPC channel, which
 * the kernel closes whenever this process ends, even by SIGKILL; the service takes the
 * channel's end as SIGTERM (main.ts) and stops, releasing the port and the data directory.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { helpRequested, parseCommand, positionals, type Command } from './args.js';
import { CliError, UsageError } from './errors.js';
import type { CliIo } from './io.js';

const USAGE = `Usage: iki serve [--port <n>] [--data <dir>]

Runs the iki licensing and key service (@iki/server) until Ctrl-C or SIGTERM. Other
settings come from the environment (see server/README.md).

      --port <n>     the port to listen on (0 to 65535)
      --data <dir>   the folder for the service's data
  -h, --help         show this help
`;

/**
 * glibc malloc settings the service runs with unless the environment sets them (issue 28 item
 * 5; docs/deploy.md "Memory"): at most 2 arenas instead of 8 per core, and freed memory above
 * 128 KiB given back (a fixed trim threshold also fixes the mmap threshold, so the workers'
 * 1 MiB chunk buffers are mapped and unmapped instead of piling up in arenas). Measured in
 * bench/RESULTS.md: about 140 MiB less resident after an upload and a copy. Read by glibc when
 * the process starts, so they are set here, for the process this command starts.
 */
export const SERVICE_MALLOC_ENV: Readonly<Record<string, string>> = Object.freeze({
  MALLOC_ARENA_MAX: '2',
  MALLOC_TRIM_THRESHOLD_: '131072',
});

/** The service's built entry point, or undefined when it is not installed or built. */
function serverEntry(): string | undefined {
  try {
    const entry = fileURLToPath(import.meta.resolve('@iki/server'));
    return existsSync(entry) ? entry : undefined;
  } catch {
    return undefined;
  }
}

async function run(argv: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals: rest } = parseCommand(argv, { port: { type: 'string' }, data: { type: 'string' } });
  if (helpRequested(values, serve, io)) return 0;
  positionals(rest, [], 'serve');
  const args: string[] = [];
  if (values.port !== undefined) {
    const port = Number(values.port);
    if (!/^\d+$/u.test(values.port) || port > 65535) throw new UsageError('--port must be 0 to 65535');
    args.push('--port', String(port));
  }
  if (values.data !== undefined) args.push('--data', values.data);
  const entry = serverEntry();
  if (entry === undefined) throw new CliError('NOT_FOUND', 'the licensing service (@iki/server) is not installed or not built; run make build');
  // Its own process group, so a terminal's Ctrl-C reaches it once (forwarded below) and not
  // twice, which would cut its graceful shutdown short.
  const child = spawn(process.execPath, [entry, ...args], { stdio: ['inherit', 'inherit', 'inherit', 'ipc'], detached: true,
    env: { ...SERVICE_MALLOC_ENV, ...process.env } });
  // Nothing is sent over the channel; it must not keep this process alive by itself.
  child.channel?.unref();
  const forward = (signal: NodeJS.Signals) => child.kill(signal);
  process.on('SIGINT', forward).on('SIGTERM', forward);
  try {
    const [code, signal] = (await once(child, 'exit')) as [number | null, NodeJS.Signals | null];
    return code ?? (signal === null ? 1 : 128 + (signal === 'SIGINT' ? 2 : 15));
  } finally {
    process.off('SIGINT', forward).off('SIGTERM', forward);
  }
}

/** The `serve` command. */
export const serve: Command = { name: 'serve', summary: 'run the licensing service (--port N --data DIR)', usage: USAGE, run };
