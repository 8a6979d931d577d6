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

/** A logger writing JSON lines to a stream (stderr by default). */
export function jsonLogger(write: (line: string) => void = (l) => process.stderr.write(l)): Logger {
  const log = (level: string) => (message: string, fields: LogFields = {}) => {
    write(`${JSON.stringify({ time: new Date().toISOString(), level, message, ...plain(fields) })}\n`);
  };
  return { info: log('info'), warn: log('warn'), error: log('error'), link: log('link') };
}

/** A logger that drops everything. */
export const silentLogger: Logger = { info() {}, warn() {}, error() {} };
