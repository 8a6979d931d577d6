/**
 * Where the CLI reads and writes. Commands never touch `process.std*` directly, so tests run
 * them in-process with captured output, a fake terminal and a fake environment.
 */

/** A terminal input as the password prompt uses it (`process.stdin` on a TTY). */
export interface TtyInput {
  readonly isTTY?: boolean;
  readonly isRaw?: boolean;
  setRawMode?(mode: boolean): unknown;
  setEncoding(encoding: BufferEncoding): unknown;
  resume(): unknown;
  pause(): unknown;
  on(event: 'data', listener: (chunk: string) => void): unknown;
  on(event: 'end', listener: () => void): unknown;
  off(event: 'data', listener: (chunk: string) => void): unknown;
  off(event: 'end', listener: () => void): unknown;
}

/** A terminal output for progress bars (`process.stderr`); bars are drawn only when `isTTY`. */
export interface TtyOutput {
  readonly isTTY?: boolean;
  readonly columns?: number;
  write(text: string): unknown;
}

/** Where the CLI writes and reads; a parameter so tests can capture it. */
export interface CliIo {
  /** Normal output (stdout). */
  out(text: string): void;
  /** Diagnostics, prompts and errors (stderr). */
  err(text: string): void;
  /** Terminal input for password prompts; prompts are refused when it is absent or not a TTY. */
  stdin?: TtyInput;
  /** stderr as a terminal, for progress bars; none are drawn when absent or not a TTY. */
  stderr?: TtyOutput;
  /** The environment (`IKI_TOKEN`); `process.env` when absent. */
  env?: Readonly<Record<string, string | undefined>>;
}

/** The process's own streams. */
export const processIo: CliIo = {
  out: (text) => void process.stdout.write(text),
  err: (text) => void process.stderr.write(text),
  stdin: process.stdin,
  stderr: process.stderr,
  env: process.env,
};
