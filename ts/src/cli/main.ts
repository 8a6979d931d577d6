#!/usr/bin/env node
/**
 * The `iki` command line (the `bin` of @iki/core). For now it prints help
 * and versions; `iki serve --port 8080 --data .data` arrives with the
 * licensing service.
 */
import { readFileSync, realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** Where the CLI writes; a parameter so tests can capture it. */
export interface CliIo {
  out(text: string): void;
  err(text: string): void;
}

const USAGE = `Usage: iki <command> [options]

Commands:
  serve --port <n> --data <dir>   run the licensing service (arrives with the service)
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
  if (command === 'serve') {
    io.err('iki serve: the licensing service arrives with the service issue\n');
    return 1;
  }
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
