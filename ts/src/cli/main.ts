#!/usr/bin/env node
/**
 * The `iki` command line (the `bin` of @iki/core): keys and their registration with the
 * licensing service, packing folders into signed containers, inspecting, verifying and
 * unpacking them, watermarks, and running the service. Every failure is one line
 * `iki: <CODE>: <message>` on stderr with exit status 1 (2 for usage errors, 130 for a
 * cancelled prompt), never a stack trace (set IKI_DEBUG=1 to see one). README "CLI"
 * documents the commands and codes.
 */
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { loadWasm } from '../wasm.js';
import type { Command } from './args.js';
import { download } from './download.js';
import { describeFailure, failureLine, UsageError } from './errors.js';
import { inspect, verify } from './inspect.js';
import { processIo, type CliIo } from './io.js';
import { keygen } from './keygen.js';
import { keys } from './keys-command.js';
import { login, logout } from './login.js';
import { pack } from './pack.js';
import { registerKey } from './register-key.js';
import { serve } from './serve.js';
import { apiKeys, licenses } from './sell-commands.js';
import { shops } from './shop-commands.js';
import { webhooks } from './webhook-commands.js';
import { unpack } from './unpack.js';
import { cliVersion } from './version.js';
import { watermark } from './watermark.js';

export type { CliIo } from './io.js';

const COMMANDS: readonly Command[] = [keygen, login, logout, registerKey, keys, pack, inspect, verify, unpack, watermark, download,
  apiKeys, licenses, webhooks, shops, serve];

const USAGE = `Usage: iki <command> [options]

Commands:
${COMMANDS.map((c) => `  ${c.name.padEnd(12)} ${c.summary}`).join('\n')}
  version      print the versions of iki and of its WebAssembly core

Run iki <command> --help for a command's options. Most take --json for machine-readable
output. Exit status: 0 success, 1 refused or damaged input, 2 usage error.

Examples (--service is the address you open the service's pages at):
  iki keygen -o me.key
  iki register-key --key me.key --service https://iki.example --email me@example.com
  iki pack model/ --key me.key --service https://iki.example -o model.ikm
  iki serve --port 8080 --data .data

Options:
  -h, --help      show this help
  -V, --version   same as "iki version"
`;

const VERSION_USAGE = `Usage: iki version

Prints the version of iki and of its WebAssembly core, e.g. "iki 0.1.0 (core 0.1.0)".
"iki --version" and "iki -V" do the same.
`;

async function coreVersion(): Promise<string> {
  try {
    return (await loadWasm()).version();
  } catch {
    return 'unavailable (run make wasm)';
  }
}

async function dispatch(argv: readonly string[], io: CliIo): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '-h' || name === '--help' || name === 'help') {
    io.out(USAGE);
    return name === undefined ? 2 : 0;
  }
  if (name === '-V' || name === '--version' || name === 'version') {
    if (rest.length === 1 && (rest[0] === '--help' || rest[0] === '-h')) {
      io.out(VERSION_USAGE);
      return 0;
    }
    if (rest.length > 0) {
      io.err(`iki: USAGE: ${name} takes no arguments; got ${JSON.stringify(rest[0])} (run iki version)\n`);
      return 2;
    }
    io.out(`iki ${cliVersion()} (core ${await coreVersion()})\n`);
    return 0;
  }
  const command = COMMANDS.find((c) => c.name === name);
  if (command === undefined) {
    const near = COMMANDS.filter((c) => c.name.startsWith(name.slice(0, 3)) && name.length >= 3).map((c) => c.name);
    const hint = near.length === 0 ? '' : `did you mean ${near.join(' or ')}? `;
    const what = name.startsWith('-') ? `unknown option ${name} before the command` : `unknown command ${JSON.stringify(name)}`;
    io.err(`iki: USAGE: ${what}; ${hint}run iki --help for the list of commands\n`);
    return 2;
  }
  // The key, image and watermark calls are synchronous and need the module loaded first.
  if (command !== serve) await loadWasm();
  try {
    return await command.run(rest, io);
  } catch (error) {
    // Every usage error ends by saying where the command's options are listed.
    if (error instanceof UsageError && !error.message.includes('--help')) {
      throw new UsageError(`${error.message} (see iki ${command.name} --help)`);
    }
    throw error;
  }
}

/** Runs the CLI with `argv` (without node and script) and resolves to the exit status. */
export async function main(argv: readonly string[], io: CliIo = processIo): Promise<number> {
  try {
    return await dispatch(argv, io);
  } catch (error) {
    const failure = describeFailure(error);
    io.err(failureLine(failure));
    if (process.env.IKI_DEBUG !== undefined && error instanceof Error && error.stack !== undefined) io.err(`${error.stack}\n`);
    return failure.exitCode;
  }
}

function invokedDirectly(): boolean {
  const script = process.argv[1];
  if (script === undefined) return false;
  try {
    return realpathSync(script) === fileURLToPath(import.meta.url);
  } catch {
    return false;
  }
}

/**
 * A reader that stops early (`iki inspect … | head -c 100`) closes the pipe, and the next
 * write fails with EPIPE (issue 22 item 12). That is the reader's choice, not a failure of the
 * command: the process ends at once and quietly, with status 0, as `git log | head` does to
 * the eye. Any other stream error stays an error.
 */
export function quietOnClosedPipe(stream: NodeJS.WritableStream, exit: (code: number) => void = (code) => process.exit(code)): void {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') exit(0);
    else throw error;
  });
}

if (invokedDirectly()) {
  quietOnClosedPipe(process.stdout);
  process.exitCode = await main(process.argv.slice(2));
}
