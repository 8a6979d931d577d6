/**
 * A small structured logger: one JSON object per line on stderr. Services and routes take a
 * `Logger` by injection so tests can capture what would be logged (for example the e-mail
 * verification link, which is written to the log when no SMTP is configured).
 */

/** Log fields; `error` values are reduced to name, message and stack. */
export type LogFields = Record<string, unknown>;

/** The logging interface every module receives. */
export interface Logger {
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
  /**
   * A line that carries a credential: a verification or reset link written to the log when no
   * SMTP server is configured. A level of its own (`"level":"link"`), so an operator can route
   * or drop these lines apart from the rest; loggers without it log such lines as `info`.
   */
  link?(message: string, fields?: LogFields): void;
}

function plain(fields: LogFields): LogFields {
  // Most lines (every access-log line) carry no error: they are written as they are.
  let errors = false;
  for (const key in fields) if (fields[key] instanceof Error) errors = true;
  if (!errors) return fields;
  const out: LogFields = {};
  for (const [key, value] of Object.entries(fields)) {
    out[key] = value instanceof Error
      ? { name: value.name, message: value.message, stack: value.stack }
      : value;
  }
  return out;
}

/**
 * Where a logger's lines go: `write` may hold a line back, `writeNow` writes it (and anything
 * held before it) at once.
 */
export interface LogSink {
  write(line: string): void;
  writeNow(line: string): void;
}

/** How long info lines may wait to be written together, and how many bytes at most. */
export const LOG_BATCH = { delayMs: 25, maxBytes: 64 * 1024 } as const;

/**
 * A sink that writes info lines (the access log: one per request) in batches, one write per
 * `delayMs` or per `maxBytes`, in order: at one request at a time every line was a write
 * system call of its own on the key release's path (issue 28 item 1). Warnings, errors and
 * links are written at once, with everything held before them; what is held is written when
 * the process exits (`exit` event: process.exit, the end of the event loop, an uncaught
 * exception) and by `flush()`. Only a hard kill (SIGKILL) can lose the last `delayMs` of info
 * lines. The timer runs only while a line is held, and does not keep the process alive.
 */
export function batchedSink(out: (text: string) => void, batch: { delayMs: number; maxBytes: number } = LOG_BATCH): LogSink & { flush(): void } {
  let held: string[] = [];
  let bytes = 0;
  let timer: NodeJS.Timeout | undefined;
  const flush = (): void => {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    if (held.length === 0) return;
    const text = held.length === 1 ? held[0]! : held.join('');
    held = [];
    bytes = 0;
    out(text);
  };
  return {
    write(line) {
      held.push(line);
      bytes += line.length;
      if (bytes >= batch.maxBytes) flush();
      else if (timer === undefined) timer = setTimeout(flush, batch.delayMs).unref();
    },
    writeNow(line) {
      held.push(line);
      flush();
    },
    flush,
  };
}

let stderrSink: (LogSink & { flush(): void }) | undefined;

/** The process's one batched stderr sink (one `exit` listener however many loggers use it). */
export function stderrLog(): LogSink & { flush(): void } {
  if (stderrSink === undefined) {
    const sink = batchedSink((text) => process.stderr.write(text));
    process.on('exit', sink.flush);
    stderrSink = sink;
  }
  return stderrSink;
}

/** Writes what stderr's log sink holds, before a line written to stderr by other means. */
export function flushLog(): void {
  stderrSink?.flush();
}

/**
 * A logger writing JSON lines: to stderr through the batched sink by default (info lines in
 * batches, the rest at once), every line to `write` when one is given, or to the sink `to`.
 */
export function jsonLogger(write?: (line: string) => void, to?: LogSink): Logger {
  const sink: LogSink = to ?? (write === undefined ? stderrLog() : { write, writeNow: write });
  const log = (level: string, now: boolean) => (message: string, fields: LogFields = {}) => {
    const line = `${JSON.stringify({ time: new Date().toISOString(), level, message, ...plain(fields) })}\n`;
    if (now) sink.writeNow(line);
    else sink.write(line);
  };
  return { info: log('info', false), warn: log('warn', true), error: log('error', true), link: log('link', true) };
}

/** A logger that drops everything. */
export const silentLogger: Logger = { info() {}, warn() {}, error() {} };
