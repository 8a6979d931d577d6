#!/usr/bin/env node
/**
 * The `iki` command line (the `bin` of @iki/core): help, versions, and
 * `iki serve --port 8080 --data .data`, which runs the licensing service
 * (@iki/server's entry point) in a child process when it is installed.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** Where the CLI writes; a parameter so tests can capture it. */
export interface CliIo {
  out(text: string): void;
  err(text: string): void;
}

const USAGE = `Usage: iki <command> [options]

Commands:
  serve --port <n> --data <dir>   run the licensing service (@iki/server)
  version                         print the versions of iki and of its WebAssembly core

Options:
  -h, --help                      show this help
  -V, --version                   same as "iki version"
`;

function packageVersion(): string {
  const manifest: unknown = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
  const version = (manifest as { version?: unknown }).version;
  return typeof version === 'string' ? version : 'unknown';
}

async function coreVersion(): Promise<string> {
  try {
    const { loadWasm } = await import('../wasm.js');
    return (await loadWasm()).version();
  } catch {
    return 'unavailable (run make wasm)';
  }
}

/** The service's built entry point, or undefined when it is not installed or built. */
function serverEntry(): string | undefined {
  try {
    const entry = fileURLToPath(import.meta.resolve('@iki/server'));
    return existsSync(entry) ? entry : undefined;
  } catch {
    return undefined;
  }
}

/** Runs the service with `args` until it exits; Ctrl-C and SIGTERM reach it. */
async function serve(args: readonly string[], io: CliIo): Promise<number> {
  const entry = serverEntry();
  if (entry === undefined) {
    io.err('iki serve: the licensing service (@iki/server) is not installed or not built; run make build\n');
    return 1;
  }
  // Its own process group, so a terminal's Ctrl-C reaches it once (forwarded
  // below) and not twice, which would cut its graceful shutdown short.
  const child = spawn(process.execPath, [entry, ...args], { stdio: 'inherit', detached: true });
  const forward = (signal: NodeJS.Signals) => child.kill(signal);
  process.on('SIGINT', forward).on('SIGTERM', forward);
  try {
    const [code] = (await once(child, 'exit')) as [number | null, NodeJS.Signals | null];
    return code ?? 1;
  } finally {
    process.off('SIGINT', forward).off('SIGTERM', forward);
  }
}

/** Runs the CLI with `argv` (without node and script) and returns the exit code. */
export async function main(argv: readonly string[], io: CliIo = defaultIo): Promise<number> {
  const [command] = argv;
  if (command === undefined || command === '-h' || command === '--help' || command === 'help') {
    io.out(USAGE);
    return command === undefined ? 2 : 0;
  }
  if (command === '-V' || command === '--version' || command === 'version') {
    io.out(`iki ${packageVersion()} (core ${await coreVersion()})\n`);
    return 0;
  }
  if (command === 'serve') return serve(argv.slice(1), io);
  io.err(`iki: unknown command '${command}'\n\n${USAGE}`);
  return 2;
}

const defaultIo: CliIo = {
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
};

function invokedDirectly(): boolean {
  const script = process.argv[1];
  if (script === undefined) return false;
  try {
    return realpathSync(script) === fileURLToPath(import.meta.url);
  } catch {
    return false;
  }
}

if (invokedDirectly()) {
  process.exitCode = await main(process.argv.slice(2));
}
