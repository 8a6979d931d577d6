/**
 * Service configuration: the only module that reads `process.env` (STYLE.md "Limits,
 * declared once"). Everything is validated once at start; a bad value stops the service with
 * a message that lists every problem. The release rate limits (SPEC "Limits": 20 per license
 * and 120 per user per hour) are defaults here and are documented in the OpenAPI document.
 * Problems never quote a value: some (IKI_ROOT_SECRET, IKI_SMTP_URL) are secrets.
 */
import { isIP } from 'node:net';
import { readOpsConfig, sharedStateProblems, type OpsConfig } from './ops/config.js';
import { readAccountSettings, type AccountSettings } from './account-config.js';
import { readCorsOrigins } from './cors-config.js';
import { readQuotaLimits, type QuotaLimits } from './quota-config.js';
import { readConnectionLimits, type ConnectionLimits } from './connection-config.js';
import { Redacted } from './redacted.js';
import { readS3Settings, s3PartProblem, type S3Settings } from './s3-config.js';
import { readWebhookSettings, type WebhookSettings } from './webhook-config.js';
import { readFlagSettings, type FlagSettings } from './activity-config.js';
import { readStorageSettings, type StorageSettings } from './storage-config.js';
import { SmtpServer, type Mailbox, type StartTls } from './services/mail-settings.js';
import { Reader, type Env } from './config-reader.js';
import { DEFAULT_START_TLS, readMail, type MailConfig } from './mail-config.js';

export { SmtpServer, type Mailbox, type StartTls };
export type { MailConfig } from './mail-config.js';
export type { CopyLimits, IdentifyLimits, QuotaLimits, UploadLimits } from './quota-config.js';
export type { AccountSettings } from './account-config.js';
export type { ConnectionLimits } from './connection-config.js';

/** Release limits, counted over a sliding window in the database. */
export interface ReleaseLimits {
  perLicense: number;
  perUser: number;
  windowSeconds: number;
}

/**
 * Failed sign-ins allowed per sliding window before `POST /api/sessions` is refused, counted in
 * the database (`services/accounts.ts`; `DEFAULTS` says how the numbers were chosen).
 */
export interface SignInLimits {
  /** Per normalised e-mail address, whether or not an account has it. */
  perAddress: number;
  /**
   * Per client address as Express reports it (`req.ip`, the TCP peer: `trust proxy` is off).
   * Behind a reverse proxy every client has the proxy's address and shares this one count.
   */
  perIp: number;
  windowSeconds: number;
  /**
   * Sign-in attempts of any outcome, successful ones included, per normalised address and per
   * client address in the same window (issue 22 item 9): each costs a password hash on the
   * shared pool, and a right password must not buy unlimited hashing. Undefined: the defaults.
   */
  attemptsPerAddress?: number;
  attemptsPerIp?: number;
}

/**
 * Verification e-mails allowed per sliding window (`services/verification.ts`), counted in the
 * database: every sign-up and every resend request is one, whether or not a message goes out.
 */
export interface MailLimits {
  /**
   * Per normalised e-mail address, whether or not an account has it. Limits resends only:
   * sign-up counts towards it but is never refused by it (see `services/verification.ts`).
   */
  perAddress: number;
  /** Per client address (`req.ip`, as `trustProxy` decides), sign-ups and resends together. */
  perIp: number;
  windowSeconds: number;
}

/** Request body ceilings in bytes. */
export interface BodyLimits {
  jsonBytes: number;
  masterBytes: number;
  imageBytes: number;
}

/** Argon2id cost for account passwords (see `services/passwords.ts` for the choice). */
export interface PasswordHashing {
  memoryKiB: number;
  iterations: number;
  parallelism: number;
}

/** An external OpenID Connect issuer whose access tokens are accepted. */
export interface OidcConfig {
  issuer: string;
  jwksUrl: string;
  /** Required: tokens must name it in `aud`, and in `azp` when they carry one. */
  audience: string;
}

/** The validated configuration. */
export interface Config {
  port: number;
  host: string;
  dataDir: string;
  /**
   * PostgreSQL connection string (it may hold a password, so it does not print); when absent
   * the embedded PGlite database is used.
   */
  databaseUrl: Redacted | undefined;
  /** The 32-byte root secret as base64url, when given by the environment; does not print. */
  rootSecret: Redacted | undefined;
  /** Base URL of this service: token issuer, link target, service id in license copies. */
  publicUrl: string;
  /**
   * Whether `publicUrl` was configured (IKI_PUBLIC_URL or an override). When it was not, the
   * service derives it from the port it actually listens on, so `--port 0` works.
   */
  publicUrlConfigured: boolean;
  blobStore: 'fs' | 'postgres' | 's3';
  /** The bucket and client settings with `IKI_BLOB_STORE=s3` (s3-config.ts), else undefined. */
  s3: S3Settings | undefined;
  /** Pool size, PGlite durability, retention, pending-upload sweep (storage-config.ts). */
  storage: StorageSettings;
  releaseLimits: ReleaseLimits;
  signInLimits: SignInLimits;
  mailLimits: MailLimits;
  accessTokenTtlSeconds: number;
  /**
   * Time budget of one identify request in milliseconds (`IKI_IDENTIFY_BUDGET_MS`): the blind
   * read, then the search of the master's textures for a resized or cropped leak
   * (docs/watermark.md section 11). When it runs out the answer is "not found" with reason
   * `time_budget`.
   */
  identifyBudgetMs: number;
  verificationTtlSeconds: number;
  bodyLimits: BodyLimits;
  /** Uploads, license copies and identify: concurrency, rates and the storage quota. */
  quotas: QuotaLimits;
  passwordHashing: PasswordHashing;
  oidc: OidcConfig | undefined;
  /**
   * Express's `trust proxy`: which peers may name the client in X-Forwarded-For. `false` (the
   * default) takes the TCP peer as the client, which is right without a reverse proxy; behind
   * one, every client would otherwise share the proxy's per-client sign-in count.
   */
  trustProxy: TrustProxy;
  /** Origins of apps on other sites that may call the API with bearer tokens (IKI_CORS_ORIGINS; cors-config.ts). */
  corsOrigins: string[];
  /** Outgoing mail over SMTP; when absent, verification links are written to the log. */
  mail: MailConfig | undefined;
  /** Workers, drain, metrics, access log, shared blob directory (`ops/config.ts`). */
  ops: OpsConfig;
  /** Sessions, password resets, the global mail cap and license creation (`AccountSettings`). */
  accountSettings: AccountSettings;
  /** Header, body and stall timeouts; connections per client and in all (`connection-config.ts`). */
  connections: ConnectionLimits;
  /** Webhook delivery (issue 26 item 4; webhook-config.ts). */
  webhooks: WebhookSettings;
  /** When licenses are flagged (issue 29 item 3; activity-config.ts). */
  flags: FlagSettings;
}


/** `false`, a number of proxy hops, or addresses, CIDR subnets and Express's named ranges. */
export type TrustProxy = false | number | string[];

/** Thrown when the environment does not describe a valid configuration. */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration: ${problems.join('; ')}`);
    this.name = 'ConfigError';
  }
}

const MIB = 1024 * 1024;

/** Defaults; the release limits come from SPEC "Limits". */
export const DEFAULTS = {
  port: 8080,
  host: '127.0.0.1',
  dataDir: '.data',
  releasesPerLicensePerHour: 20,
  releasesPerUserPerHour: 120,
  releaseWindowSeconds: 3600,
  // Ten guesses per address per quarter hour is 960 a day: enough for a person who mistypes,
  // far too few for a dictionary. The per-IP limit lets a shared NAT's users mistype too
  // while stopping one client from spraying one password over many addresses.
  signInFailuresPerAddress: 10,
  signInFailuresPerIp: 50,
  signInWindowSeconds: 15 * 60,
  // A person signs in a few times a day (a session lasts a month); twenty in a quarter hour per
  // address, or a hundred per client (a NAT's users together), is a script, and each is an
  // Argon2id hash (about 200 ms of a worker).
  signInAttemptsPerAddress: 20,
  signInAttemptsPerIp: 100,
  // A person who lost the first message asks again once or twice; three messages an hour to
  // one address is the most a stranger can make it receive. Twenty sign-ups and resends an
  // hour per client lets a shared NAT's users sign up while capping what one client can send
  // to 480 messages a day, spread over addresses it must keep changing.
  verificationMailsPerAddress: 3,
  mailsPerIp: 20,
  mailWindowSeconds: 3600,
  accessTokenTtlSeconds: 15 * 60,
  identifyBudgetMs: 10_000,
  verificationTtlSeconds: 24 * 3600,
  jsonBytes: 64 * 1024,
  masterBytes: 1024 * MIB,
  imageBytes: 64 * MIB,
  // OWASP Password Storage Cheat Sheet, Argon2id option "m=19456 (19 MiB), t=2, p=1".
  passwordHashing: { memoryKiB: 19456, iterations: 2, parallelism: 1 },
  // Opportunistic STARTTLS lets anyone on the path strip the server's offer and read the AUTH
  // password and the verification link, so the upgrade is required unless turned down.
  startTls: DEFAULT_START_TLS,
} as const;

const optionalSecret = (value: string | undefined): Redacted | undefined =>
  (value === undefined ? undefined : new Redacted(value));

function readRootSecret(r: Reader): Redacted | undefined {
  const raw = r.secret('IKI_ROOT_SECRET');
  if (raw === undefined) return undefined;
  const bytes = /^[A-Za-z0-9_-]{43}$/.test(raw) ? Buffer.from(raw, 'base64url') : undefined;
  if (bytes?.length !== 32 || bytes.toString('base64url') !== raw) {
    r.problems.push('IKI_ROOT_SECRET must be 32 bytes as unpadded base64url (43 characters)');
    return undefined;
  }
  return new Redacted(raw);
}

function readOidc(r: Reader): OidcConfig | undefined {
  const issuer = r.str('IKI_OIDC_ISSUER');
  const jwksUrl = r.url('IKI_OIDC_JWKS_URL');
  if (issuer === undefined && jwksUrl === undefined) return undefined;
  if (issuer === undefined || jwksUrl === undefined) {
    r.problems.push('IKI_OIDC_ISSUER and IKI_OIDC_JWKS_URL must be set together');
    return undefined;
  }
  const audience = r.str('IKI_OIDC_AUDIENCE');
  if (audience === undefined) {
    // Without it, a token the issuer made for any other client would be accepted here.
    r.problems.push('IKI_OIDC_AUDIENCE is required with IKI_OIDC_ISSUER (the client id tokens for this service carry in aud)');
    return undefined;
  }
  return { issuer, jwksUrl, audience };
}

const NAMED_RANGES = new Set(['loopback', 'linklocal', 'uniquelocal']);

/** One trusted proxy: a named range, an address, or an address with a prefix length. */
function proxyAddressOk(item: string): boolean {
  if (NAMED_RANGES.has(item)) return true;
  const [address = '', prefix, ...rest] = item.split('/');
  const family = isIP(address);
  if (family === 0 || rest.length > 0) return false;
  if (prefix === undefined) return true;
  const bits = /^[0-9]{1,3}$/.test(prefix) ? Number(prefix) : -1;
  return bits >= 0 && bits <= (family === 4 ? 32 : 128);
}

function readTrustProxy(r: Reader): TrustProxy {
  const raw = r.str('IKI_TRUST_PROXY');
  if (raw === undefined || raw === 'false') return false;
  if (/^[0-9]+$/.test(raw)) return r.int('IKI_TRUST_PROXY', 0, 1, 10);
  const items = raw.split(',').map((s) => s.trim());
  if (items.every(proxyAddressOk)) return items;
  r.problems.push('IKI_TRUST_PROXY must be false, a hop count from 1 to 10, or a comma-separated list of '
    + 'addresses, CIDR subnets, loopback, linklocal and uniquelocal');
  return false;
}

function readBlobStore(r: Reader): 'fs' | 'postgres' | 's3' {
  const raw = r.str('IKI_BLOB_STORE') ?? 'fs';
  if (raw === 'fs' || raw === 'postgres' || raw === 's3') return raw;
  r.problems.push('IKI_BLOB_STORE must be "fs", "postgres" or "s3"');
  return 'fs';
}

function readLimits(r: Reader): {
  releaseLimits: ReleaseLimits; signInLimits: SignInLimits; mailLimits: MailLimits; bodyLimits: BodyLimits;
} {
  return {
    releaseLimits: {
      perLicense: r.int('IKI_RELEASES_PER_LICENSE_PER_HOUR', DEFAULTS.releasesPerLicensePerHour, 1, 100000),
      perUser: r.int('IKI_RELEASES_PER_USER_PER_HOUR', DEFAULTS.releasesPerUserPerHour, 1, 1000000),
      windowSeconds: DEFAULTS.releaseWindowSeconds,
    },
    signInLimits: {
      perAddress: r.int('IKI_SIGN_IN_FAILURES_PER_ADDRESS', DEFAULTS.signInFailuresPerAddress, 1, 10000),
      perIp: r.int('IKI_SIGN_IN_FAILURES_PER_IP', DEFAULTS.signInFailuresPerIp, 1, 1000000),
      windowSeconds: r.int('IKI_SIGN_IN_WINDOW_SECONDS', DEFAULTS.signInWindowSeconds, 60, 24 * 3600),
      attemptsPerAddress: r.int('IKI_SIGN_INS_PER_ADDRESS', DEFAULTS.signInAttemptsPerAddress, 1, 100_000),
      attemptsPerIp: r.int('IKI_SIGN_INS_PER_IP', DEFAULTS.signInAttemptsPerIp, 1, 10_000_000),
    },
    mailLimits: {
      perAddress: r.int('IKI_VERIFICATION_MAILS_PER_ADDRESS', DEFAULTS.verificationMailsPerAddress, 1, 1000),
      perIp: r.int('IKI_MAILS_PER_IP', DEFAULTS.mailsPerIp, 1, 1000000),
      windowSeconds: r.int('IKI_MAIL_WINDOW_SECONDS', DEFAULTS.mailWindowSeconds, 60, 24 * 3600),
    },
    bodyLimits: {
      jsonBytes: r.int('IKI_MAX_JSON_BYTES', DEFAULTS.jsonBytes, 1024, 16 * MIB),
      masterBytes: r.int('IKI_MAX_MASTER_BYTES', DEFAULTS.masterBytes, 1024, 64 * 1024 * MIB),
      imageBytes: r.int('IKI_MAX_IMAGE_BYTES', DEFAULTS.imageBytes, 1024, 1024 * MIB),
    },
  };
}

/**
 * Reads and validates the configuration. `env` defaults to `process.env`; `overrides` win over
 * the environment (used by `serve({port, dataDir})` and by tests).
 */
export function loadConfig(env: Env = process.env, overrides: Partial<Config> = {}): Config {
  const r = new Reader(env);
  const port = r.int('IKI_PORT', DEFAULTS.port, 0, 65535);
  const config: Config = {
    port,
    host: r.str('IKI_HOST') ?? DEFAULTS.host,
    dataDir: r.str('IKI_DATA_DIR') ?? DEFAULTS.dataDir,
    databaseUrl: optionalSecret(r.secret('DATABASE_URL')),
    rootSecret: readRootSecret(r),
    publicUrl: r.url('IKI_PUBLIC_URL') ?? `http://localhost:${overrides.port ?? port}`,
    publicUrlConfigured: r.str('IKI_PUBLIC_URL') !== undefined || overrides.publicUrl !== undefined,
    blobStore: readBlobStore(r),
    s3: readS3Settings({ int: (...a) => r.int(...a), str: (n) => r.str(n), secret: (n) => r.secret(n), url: (n) => r.url(n),
      problem: (m) => r.problems.push(m), redact: (v) => new Redacted(v) }, r.str('IKI_BLOB_STORE') ?? 'fs'),
    storage: readStorageSettings((name, fallback, min, max) => r.int(name, fallback, min, max), (name) => r.str(name),
      r.problems),
    ...readLimits(r),
    quotas: readQuotaLimits((name, fallback, min, max) => r.int(name, fallback, min, max)),
    accessTokenTtlSeconds: r.int('IKI_ACCESS_TOKEN_TTL_SECONDS', DEFAULTS.accessTokenTtlSeconds, 60, 24 * 3600),
    identifyBudgetMs: r.int('IKI_IDENTIFY_BUDGET_MS', DEFAULTS.identifyBudgetMs, 100, 600_000),
    verificationTtlSeconds: DEFAULTS.verificationTtlSeconds,
    passwordHashing: { ...DEFAULTS.passwordHashing },
    oidc: readOidc(r),
    trustProxy: readTrustProxy(r),
    corsOrigins: readCorsOrigins({ str: (name) => r.str(name), problem: (text) => r.problems.push(text) }),
    mail: readMail(r),
    ops: readOpsConfig({ int: (...a) => r.int(...a), str: (n) => r.str(n), secret: (n) => r.secret(n),
      problem: (m) => r.problems.push(m), redact: (v) => new Redacted(v) }),
    webhooks: readWebhookSettings({ int: (name, fallback, min, max) => r.int(name, fallback, min, max),
      str: (name) => r.str(name), problem: (text) => r.problems.push(text) }),
    flags: readFlagSettings({ int: (name, fallback, min, max) => r.int(name, fallback, min, max),
      str: (name) => r.str(name), problem: (text) => r.problems.push(text) }),
    accountSettings: readAccountSettings({ int: (name, fallback, min, max) => r.int(name, fallback, min, max),
      str: (name) => r.str(name), problem: (text) => r.problems.push(text) }),
    connections: readConnectionLimits((name, fallback, min, max) => r.int(name, fallback, min, max)),
    ...overrides,
  };
  if (config.publicUrl.startsWith('https:') && config.mail === undefined && !config.accountSettings.allowLogMail) {
    // Links in a log are credentials: fine on a laptop, not for a service people reach over https.
    r.problems.push('an https IKI_PUBLIC_URL needs IKI_SMTP_URL to send verification and reset links; '
      + 'set IKI_ALLOW_LOG_MAIL=1 to write them to the log instead');
  }
  if (config.mail !== undefined && !config.publicUrlConfigured) {
    // Issue 22 item 4: links in real mail must not be built from a request's Host header.
    r.problems.push('IKI_PUBLIC_URL is required when IKI_SMTP_URL is set: links in e-mails point there');
  }
  if (config.databaseUrl !== undefined && config.rootSecret === undefined) {
    // Several instances share one database; each must hold the same root secret.
    r.problems.push('IKI_ROOT_SECRET is required when DATABASE_URL is set');
  }
  r.problems.push(...sharedStateProblems(config));
  const parts = s3PartProblem(config.s3, config.bodyLimits.masterBytes);
  if (parts !== undefined) r.problems.push(parts);
  if (r.problems.length > 0) throw new ConfigError(r.problems);
  return config;
}
