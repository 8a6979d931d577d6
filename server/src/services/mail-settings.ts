/**
 * The shapes of the mail settings, parsed from text by `config.ts` (which alone reads the
 * environment): the SMTP server URL (`smtp://` with STARTTLS, RFC 3207, or `smtps://`, TLS
 * from the first byte, RFC 8314 §3.3) and the sender mailbox (RFC 5321 §4.1.2, RFC 5322
 * §3.4). Problems are reported without quoting the value: the URL may hold a password.
 */
import { isIP } from 'node:net';
import { inspect } from 'node:util';

/**
 * How an `smtp://` connection is protected. `required` refuses to send unless the server
 * upgrades the connection with STARTTLS; `optional` upgrades when the server offers it and
 * otherwise sends in plain text; `off` never upgrades (a relay on the loopback interface).
 */
export type StartTls = 'required' | 'optional' | 'off';

/** A mailbox: an address and an optional display name. */
export interface Mailbox {
  name: string | undefined;
  address: string;
}

/** Message submission port (RFC 6409 §3.1), the default of `smtp://`. */
export const SMTP_SUBMISSION_PORT = 587;
/** Submission over implicit TLS (RFC 8314 §7.3), the default of `smtps://`. */
export const SMTPS_PORT = 465;
/** Longest address a forward path may carry: 256 octets less the angle brackets (RFC 5321 §4.5.3.1.3). */
export const MAX_MAIL_ADDRESS_CHARS = 254;
/** Longest local part, before the @ (RFC 5321 §4.5.3.1.1). */
export const MAX_MAIL_LOCAL_PART_CHARS = 64;

/**
 * The SMTP server of IKI_SMTP_URL. The user name and password live in private fields that
 * only `credentials()` hands out; `toString`, `toJSON` and `util.inspect` print the scheme,
 * host and port alone, so logging or serialising the configuration cannot leak them. (As with
 * the root secret, JavaScript cannot wipe a string; the password lives as long as the process.)
 */
export class SmtpServer {
  readonly #user: string | undefined;
  readonly #password: string | undefined;

  constructor(readonly host: string, readonly port: number, readonly secure: boolean, readonly startTls: StartTls,
    credentials?: { user: string; password: string }) {
    this.#user = credentials?.user;
    this.#password = credentials?.password;
  }

  /** The AUTH user and password, when the URL gave them. */
  credentials(): { user: string; password: string } | undefined {
    return this.#user === undefined || this.#password === undefined
      ? undefined : { user: this.#user, password: this.#password };
  }

  /** `smtp://host:port` or `smtps://host:port`, without credentials: safe to log. */
  get address(): string {
    const host = isIP(this.host) === 6 ? `[${this.host}]` : this.host;
    return `${this.secure ? 'smtps' : 'smtp'}://${host}:${this.port}`;
  }

  toString(): string {
    return `SmtpServer(${this.address}${this.#password === undefined ? '' : ', credentials redacted'})`;
  }

  toJSON(): string {
    return this.toString();
  }

  [inspect.custom](): string {
    return this.toString();
  }
}

// Dot-atom local parts and LDH domain labels only: quoted local parts, comments and non-ASCII
// names are legal in RFC 5322 but not needed for a sender, and refusing them keeps CR, LF and
// other header-breaking characters out of the From line.
const LOCAL_PART = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/;
const DOMAIN = /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;

/** `address` or `Display Name <address>` (the name optionally in double quotes); undefined when malformed. */
export function parseMailbox(raw: string): Mailbox | undefined {
  if (/[\x00-\x1f\x7f]/.test(raw)) return undefined;
  const match = /^(?:([^<>]*?)\s*<([^<>\s]+)>|([^<>\s]+))$/.exec(raw);
  if (match === null) return undefined;
  const address = match[2] ?? match[3] ?? '';
  const at = address.lastIndexOf('@');
  const local = address.slice(0, at);
  if (at < 1 || address.length > MAX_MAIL_ADDRESS_CHARS || local.length > MAX_MAIL_LOCAL_PART_CHARS
    || !LOCAL_PART.test(local) || !DOMAIN.test(address.slice(at + 1))) return undefined;
  const name = match[1]?.replace(/^"(.*)"$/, '$1').trim();
  if (name !== undefined && /["\\]/.test(name)) return undefined;
  return { name: name === '' ? undefined : name, address };
}

/** What an SMTP URL names, before the STARTTLS setting is added. */
export interface SmtpUrlParts {
  host: string;
  port: number;
  secure: boolean;
  credentials: { user: string; password: string } | undefined;
}

function hostOf(hostname: string): string | undefined {
  const inner = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : undefined;
  if (inner !== undefined) return isIP(inner) === 6 ? inner : undefined;
  return isIP(hostname) === 4 || DOMAIN.test(hostname) ? hostname : undefined;
}

function credentialsOf(url: URL, name: string, problems: string[]): SmtpUrlParts['credentials'] {
  if (url.username === '' && url.password === '') return undefined;
  if (url.username === '' || url.password === '') {
    problems.push(`${name} must give both a user and a password, or neither`);
    return undefined;
  }
  try {
    return { user: decodeURIComponent(url.username), password: decodeURIComponent(url.password) };
  } catch {
    problems.push(`${name} user and password must be valid percent-encoded UTF-8`);
    return undefined;
  }
}

/**
 * Parses `smtp://[user:password@]host[:port]` or `smtps://...`; pushes each problem (named
 * after `name`, never quoting the text) and returns undefined when there is one.
 */
export function parseSmtpUrl(raw: string, name: string, problems: string[]): SmtpUrlParts | undefined {
  const shape = `${name} must be smtp://[user:password@]host[:port] or smtps://[user:password@]host[:port] `
    + 'with a port from 1 to 65535';
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    // The parser's TypeError carries the input in `input`; it is dropped here on purpose.
    problems.push(shape);
    return undefined;
  }
  const secure = url.protocol === 'smtps:';
  if (!secure && url.protocol !== 'smtp:') {
    // Another scheme's host and path rules differ; checking them would only add noise.
    problems.push(`${name} must start with smtp:// or smtps://`);
    return undefined;
  }
  const before = problems.length;
  const host = hostOf(url.hostname);
  if (host === undefined) problems.push(`${name} must name a host: a DNS name or an IP address`);
  // The URL parser refuses ports above 65535 itself; 0 parses but cannot be dialled.
  if (url.port === '0') problems.push(shape);
  if ((url.pathname !== '' && url.pathname !== '/') || url.search !== '' || url.hash !== '') {
    problems.push(`${name} must not have a path, query or fragment`);
  }
  const credentials = credentialsOf(url, name, problems);
  if (problems.length > before || host === undefined) return undefined;
  const port = url.port === '' ? (secure ? SMTPS_PORT : SMTP_SUBMISSION_PORT) : Number(url.port);
  return { host, port, secure, credentials };
}
