/**
 * Passwords: typed at a terminal without echo, or read from the first line of a file. Both
 * are normalised to NFC (docs/format.md section 3.1: iki's CLI and app hash the NFC form, so
 * the same password typed on different systems opens the same slot).
 *
 * The prompt puts the terminal in raw mode, so the line discipline echoes nothing; it handles
 * Backspace, Ctrl-U (clear), Ctrl-C and Ctrl-D (cancel) itself, skips escape sequences (arrow
 * keys), and restores the terminal however it ends. A JavaScript string cannot be zeroized;
 * the password lives until the collector frees it, and is handed to WASM once per use.
 */
import { open } from 'node:fs/promises';
import { CliError, naming, UsageError } from './errors.js';
import type { CliIo, TtyInput } from './io.js';

/** The longest password line read from a file, in bytes (a bound on a mistaken `--password-file /dev/zero`). */
export const MAX_PASSWORD_FILE_BYTES = 64 * 1024;

const cancelled = () => new CliError('CANCELLED', 'cancelled', 130);

/** Removes the last code point. */
const dropLast = (text: string) => Array.from(text).slice(0, -1).join('');

/**
 * Reads one line from a terminal without echoing it. Rejects with `CANCELLED` on Ctrl-C,
 * Ctrl-D on an empty line, or end of input.
 */
export function readHidden(prompt: string, input: TtyInput, write: (text: string) => void): Promise<string> {
  if (input.isTTY !== true || input.setRawMode === undefined) {
    return Promise.reject(new UsageError('a password prompt needs a terminal; use --password-file'));
  }
  const setRaw = input.setRawMode.bind(input);
  const wasRaw = input.isRaw === true;
  return new Promise((resolve, reject) => {
    let value = '';
    let escape = false;
    const finish = (error?: Error) => {
      input.off('data', onData);
      input.off('end', onEnd);
      setRaw(wasRaw);
      input.pause();
      write('\n');
      if (error === undefined) resolve(value.normalize('NFC'));
      else reject(error);
    };
    const onEnd = () => finish(cancelled());
    const onData = (chunk: string) => {
      for (const ch of chunk) {
        if (escape) {
          escape = !/[A-Za-z~]/u.test(ch); // an escape sequence ends with a letter or ~
        } else if (ch === '\r' || ch === '\n') {
          return finish();
        } else if (ch === '\u0003' || (ch === '\u0004' && value === '')) {
          return finish(cancelled());
        } else if (ch === '\u007f' || ch === '\b') {
          value = dropLast(value);
        } else if (ch === '\u0015') {
          value = '';
        } else if (ch === '\u001b') {
          escape = true;
        } else if (ch >= ' ') {
          value += ch;
        }
      }
    };
    setRaw(true);
    input.setEncoding('utf8');
    input.on('data', onData);
    input.on('end', onEnd);
    input.resume();
    write(prompt);
  });
}

function noTerminal(io: CliIo): TtyInput {
  if (io.stdin?.isTTY !== true) throw new UsageError('--password prompts on a terminal, and stdin is not one; use --password-file');
  return io.stdin;
}

/** Asks for an existing password once. */
export async function promptPassword(io: CliIo): Promise<string> {
  const password = await readHidden('Password: ', noTerminal(io), (t) => io.err(t));
  if (password === '') throw new CliError('INVALID_ARGUMENT', 'the password is empty');
  return password;
}

/** Asks for a new password twice; they must match and not be empty. */
export async function promptNewPassword(io: CliIo): Promise<string> {
  const input = noTerminal(io);
  const first = await readHidden('New password: ', input, (t) => io.err(t));
  if (first === '') throw new CliError('INVALID_ARGUMENT', 'the password is empty');
  const second = await readHidden('Repeat password: ', input, (t) => io.err(t));
  if (first !== second) throw new CliError('INVALID_ARGUMENT', 'the passwords do not match');
  return first;
}

/** The first line of `bytes` (without `\n` or `\r\n`) in NFC; refused when empty or not UTF-8. */
function firstLine(bytes: Uint8Array, where: string): string {
  const end = bytes.indexOf(0x0a);
  let line: string;
  try {
    line = new TextDecoder('utf-8', { fatal: true }).decode(end < 0 ? bytes : bytes.subarray(0, end)).replace(/\r$/u, '');
  } catch {
    throw new CliError('INVALID_ARGUMENT', `${where}: the first line is not UTF-8`);
  }
  if (line === '') throw new CliError('INVALID_ARGUMENT', `${where}: the first line is empty; put the password on the first line`);
  return line.normalize('NFC');
}

/** Fills `buffer` from `read` until a line end, the end of input or a full buffer; returns the bytes read. */
async function fillLine(buffer: Uint8Array, read: (at: number) => Promise<number>, where: string): Promise<number> {
  let filled = 0;
  while (filled < buffer.length) {
    const n = await read(filled);
    if (n === 0) return filled;
    const hasEnd = buffer.subarray(filled, filled + n).includes(0x0a);
    filled += n;
    if (hasEnd) return filled;
  }
  throw new CliError('INVALID_ARGUMENT', `${where}: no line end in the first ${MAX_PASSWORD_FILE_BYTES} bytes`);
}

/** Reads from standard input up to its first line end (`--password-file -`). */
async function stdinLine(buffer: Uint8Array): Promise<number> {
  const chunks = process.stdin[Symbol.asyncIterator]();
  try {
    return await fillLine(buffer, async (at) => {
      const next = await chunks.next();
      if (next.done === true) return 0;
      const chunk = next.value as Uint8Array;
      const n = Math.min(chunk.length, buffer.length - at);
      buffer.set(chunk.subarray(0, n), at);
      chunk.fill(0);
      return n;
    }, 'stdin');
  } finally {
    await chunks.return?.();
  }
}

/**
 * The first line of `file` (`-` for standard input), without its `\n` or `\r\n`,
 * NFC-normalised; refused when empty or not UTF-8. Reads sequentially, so pipes work too.
 */
export async function readPasswordFile(file: string): Promise<string> {
  const buffer = new Uint8Array(MAX_PASSWORD_FILE_BYTES);
  try {
    if (file === '-') return firstLine(buffer.subarray(0, await stdinLine(buffer)), 'stdin');
    const handle = await open(file, 'r');
    try {
      const filled = await naming(file, () => fillLine(buffer, async (at) => (await handle.read(buffer, at, buffer.length - at, null)).bytesRead, file));
      return firstLine(buffer.subarray(0, filled), file);
    } finally {
      await handle.close();
    }
  } finally {
    buffer.fill(0);
  }
}
