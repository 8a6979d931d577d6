/**
 * Command-line parsing over Node's `util.parseArgs` (strict: unknown options and missing
 * values are usage errors, exit status 2), and the value checks the commands share.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { MAX_CHUNK_SIZE_BYTES, MIN_CHUNK_SIZE_BYTES } from '../limits.js';
import { UsageError } from './errors.js';
import type { CliIo } from './io.js';

/** A subcommand of `iki`. */
export interface Command {
  name: string;
  /** One line for `iki --help`. */
  summary: string;
  /** The full `iki <name> --help` text. */
  usage: string;
  /** Runs with the arguments after the command name; resolves to the exit status. */
  run(argv: readonly string[], io: CliIo): Promise<number>;
}

type Options = NonNullable<ParseArgsConfig['options']>;

/** Options every command accepts. */
export const COMMON_OPTIONS = {
  help: { type: 'boolean', short: 'h' },
  json: { type: 'boolean' },
} as const satisfies Options;

/** What {@link parseCommand} returns for options `O`. */
export type Parsed<O extends Options> = ReturnType<typeof parseArgs<{
  args: string[]; options: typeof COMMON_OPTIONS & O; allowPositionals: true; strict: true;
}>>;

/**
 * `argv` with every value of a string option that starts with `-` written as `--name=value`.
 * `parseArgs` alone refuses `--recipient -abc…` as ambiguous, yet base64url keys and tokens
 * start with `-` one time in 64. The next argument is the option's value unless it is
 * exactly one of the command's options (`-k`, `--json`, `--name=…`) or `--`, so a missing
 * value before another option is still a usage error.
 */
export function joinDashValues(argv: readonly string[], options: Options): string[] {
  /** The long name of the option `arg` names exactly (`--name` or `-n`), if any. */
  const named = (arg: string): string | undefined => {
    if (arg.startsWith('--')) return Object.hasOwn(options, arg.slice(2)) ? arg.slice(2) : undefined;
    if (arg.length !== 2 || arg[0] !== '-') return undefined;
    return Object.entries(options).find(([, o]) => o.short === arg[1])?.[0];
  };
  const isOption = (arg: string) => arg === '--' || named(arg) !== undefined || /^--[^=]+=/u.test(arg);
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--') return [...out, ...argv.slice(i)];
    const name = named(arg);
    const next = argv[i + 1];
    if (name !== undefined && options[name]?.type === 'string' && next !== undefined && /^-./u.test(next) && !isOption(next)) {
      out.push(`--${name}=${next}`);
      i++;
    } else {
      out.push(arg);
    }
  }
  return out;
}

/** Edit distance of two short strings (for "did you mean"). */
function distance(a: string, b: string): number {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++) {
      next.push(Math.min((row[j] ?? 0) + 1, (next[j - 1] ?? 0) + 1, (row[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1)));
    }
    row = next;
  }
  return row[b.length] ?? 0;
}

/**
 * `parseArgs`'s failure in a person's words: Node's own text ("Unknown option '--x'. To
 * specify a positional argument starting with a '-', place it at the end of the command
 * after '--', as in '-- "--x"") reads as noise to someone who mistyped an option.
 */
export function parseFailure(error: unknown, options: Options): string {
  const { code, message } = error as { code?: string; message?: string };
  const text = message ?? String(error);
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
    const given = /Unknown option '([^']+)'/u.exec(text)?.[1] ?? '?';
    const bare = given.replace(/^-+/u, '').split('=')[0] ?? '';
    const near = Object.keys(options).filter((name) => distance(name, bare) <= Math.max(1, Math.floor(bare.length / 4)));
    const hint = near.length === 0 ? '' : `; did you mean ${near.map((n) => `--${n}`).join(' or ')}?`;
    return `unknown option ${given}${hint}`;
  }
  if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
    const option = /Option '(?:-[A-Za-z], )?(--[\w-]+)/u.exec(text)?.[1] ?? 'an option';
    return /does not take an argument/u.test(text) ? `${option} takes no value` : `${option} needs a value (${option} <value>)`;
  }
  return text;
}

/** Parses `argv` strictly; any parse failure is a {@link UsageError}. */
export function parseCommand<const O extends Options>(argv: readonly string[], options: O): Parsed<O> {
  const all = { ...COMMON_OPTIONS, ...options };
  try {
    return parseArgs({ args: joinDashValues(argv, all), options: all, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError(parseFailure(error, all));
  }
}

/** The positionals, which must be exactly `names.length` (named in the message). */
export function positionals(values: readonly string[], names: readonly string[], command: string): string[] {
  if (values.length !== names.length) {
    const want = names.map((n) => `<${n}>`).join(' ');
    throw new UsageError(values.length < names.length
      ? `missing ${names.slice(values.length).map((n) => `<${n}>`).join(' ')} (iki ${command} ... ${want}; see iki ${command} --help)`
      : `unexpected argument ${JSON.stringify(values[names.length])} (see iki ${command} --help)`);
  }
  return [...values];
}

/** `value`, which must be given as `--name`. */
export function required<T>(value: T | undefined, name: string, command: string): T {
  if (value === undefined) throw new UsageError(`--${name} is required (see iki ${command} --help)`);
  return value;
}

/** Exactly `length` bytes from lowercase or uppercase hex digits given as `--name`. */
export function parseHex(text: string, length: number, name: string): Uint8Array {
  if (!new RegExp(`^[0-9a-fA-F]{${length * 2}}$`, 'u').test(text)) {
    throw new UsageError(`--${name} must be ${length * 2} hex digits`);
  }
  return Uint8Array.from(text.match(/../gu) ?? [], (pair) => Number.parseInt(pair, 16));
}

/**
 * A chunk size: a whole number of bytes, or of KiB / MiB with a `K`/`KiB`/`M`/`MiB` suffix,
 * within the container's limits (4 KiB to 16 MiB).
 */
export function parseChunkSize(text: string): number {
  const match = /^(\d+)\s*(k|kib|m|mib)?$/iu.exec(text.trim());
  const unit = match?.[2]?.toLowerCase();
  const size = match === null ? NaN : Number(match[1]) * (unit === undefined ? 1 : unit.startsWith('k') ? 1024 : 1024 * 1024);
  if (!Number.isSafeInteger(size) || size < MIN_CHUNK_SIZE_BYTES || size > MAX_CHUNK_SIZE_BYTES) {
    throw new UsageError(`--chunk-size must be ${MIN_CHUNK_SIZE_BYTES} to ${MAX_CHUNK_SIZE_BYTES} bytes (e.g. 65536, 64K, 1M); got ${JSON.stringify(text)}`);
  }
  return size;
}

/** `1 entry`, `2 entries`, `0 files`: a count with its noun. */
export function plural(count: number, noun: string): string {
  if (count === 1) return `1 ${noun}`;
  return `${count} ${noun.endsWith('y') ? `${noun.slice(0, -1)}ies` : `${noun}s`}`;
}

/** Writes `value` as pretty JSON (for `--json`), with Uint8Array shown as hex. */
export function printJson(io: CliIo, value: unknown): void {
  io.out(`${JSON.stringify(value, (_key, v: unknown) => (v instanceof Uint8Array ? Buffer.from(v).toString('hex') : v), 2)}\n`);
}

/** Prints the help text when asked; returns whether it did. */
export function helpRequested(values: { help?: boolean }, command: Command, io: CliIo): boolean {
  if (values.help === true) io.out(command.usage);
  return values.help === true;
}
