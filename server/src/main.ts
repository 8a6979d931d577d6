/**
 * Entry point: `serve({port, dataDir})` loads the configuration, the root secret and the
 * storage, builds the services and listens. The crypto port is the WebAssembly key service
 * (`services/wasm-crypto.ts`, loaded from `@iki/core`) unless a factory is passed in (tests);
 * the root secret is handed to it once and the service id is the public URL. Verification
 * e-mails go over SMTP when IKI_SMTP_URL is set (`services/smtp-mailer.ts`) and to the log
 * otherwise. Run directly (`node dist/main.js`) it serves until SIGINT or SIGTERM; SIGTERM
 * drains first (`ops/drain.ts`: running downloads and uploads finish within IKI_DRAIN_SECONDS).
 * `/healthz`, `/readyz` and `/metrics` and the access log are wired here (`ops/`).
 */
import { once } from 'node:events';
import { createServer, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { createApp, createServices, type AppServices } from './app.js';
import type { Repository } from './storage/repository.js';
import { loadConfig, type Config } from './config.js';
import type { ErrorCode } from './errors.js';
import { flushLog, jsonLogger, type Logger } from './logger.js';
import { loadRootSecret } from './secrets.js';
import { newRequestId } from './services/ids.js';
import type { LicenseCryptoFactory } from './services/crypto-port.js';
import type { Mailer } from './services/mailer.js';
import { mayCrossNetworkInPlainText, smtpMailer, type SmtpMailer } from './services/smtp-mailer.js';
import { WasmLicenseCrypto } from './services/wasm-crypto.js';
import { accessLog } from './ops/access-log.js';
import { logMailer } from './services/mailer.js';
import { WebhookDeliverer } from './services/webhook-delivery.js';
import { Drain } from './ops/drain.js';
import { healthRoutes, type Probe } from './ops/health.js';
import { Metrics } from './ops/metrics.js';
import { blobProbe, dataDirProbe, databaseProbe, workersProbe } from './ops/probes.js';
import { checkingIntervalMs, guardConnections } from './ops/connections.js';
import { TransferGuard } from './ops/transfer-guard.js';
import { PooledLicenseCrypto, PooledPasswordHasher, pooledCrypto } from './services/worker-pool/pooled-crypto.js';
import type { SqlDb } from './storage/sql-db.js';
import { FlagSweeper } from './services/flags-sweep.js';
import { openStorage } from './storage/index.js';
import { sealStoredSecrets } from './storage/sealed-secrets.js';
import { secretBox } from './services/secret-box.js';
import { startFailureLine } from './start-failure.js';
import { releaseFastPath } from './routes/release-fast.js';

/**
 * How long an idle keep-alive connection stays open. Longer than a reverse proxy's idle upstream
 * timeout (nginx and most load balancers: 60 s): when the service closes first, a proxy (or any
 * client) that sends on the connection at that moment gets a reset. Node's default is 5 s.
 */
const KEEP_ALIVE_MS = 65_000;

/** Options of `serve`; anything not given comes from the environment. */
export interface ServeOptions {
  port?: number;
  dataDir?: string;
  /** Further configuration overrides (tests). */
  config?: Partial<Config>;
  /** Environment to read instead of `process.env` (tests). */
  env?: Record<string, string | undefined>;
  /** The crypto port; the WebAssembly key service (`wasmCrypto`) by default. */
  crypto?: LicenseCryptoFactory;
  logger?: Logger;
  /** Replaces the mailer the configuration chooses (tests). */
  mailer?: Mailer;
  /**
   * Whether the key release is answered in front of Express (routes/release-fast.ts); true by
   * default. Tests turn it off to compare the two paths' answers.
   */
  releaseFastPath?: boolean;
}

/** A listening service. */
export interface RunningServer {
  url: string;
  port: number;
  config: Config;
  /** The service's metrics (tests read them). */
  metrics: Metrics;
  /** The services and the repository behind them (tests arrange states no request makes). */
  services: AppServices;
  repo: Repository;
  /** Key releases answered by the release's own handler in front of Express (tests). */
  fastReleases(): number;
  /** The service's database (tests seed it, e.g. test/helpers/activity-seed.ts). */
  db: SqlDb;
  /**
   * Stops the service. With `graceMs` it drains first (ops/drain.ts): reports not ready and
   * refuses new requests for `delayMs` with the listener open, then stops accepting and lets
   * running requests finish for up to `graceMs`; without, it cuts every connection.
   */
  close(options?: { graceMs?: number; delayMs?: number }): Promise<void>;
}

/** Starts the service. */
export async function serve(options: ServeOptions = {}): Promise<RunningServer> {
  const overrides: Partial<Config> = { ...options.config };
  if (options.port !== undefined) overrides.port = options.port;
  if (options.dataDir !== undefined) overrides.dataDir = options.dataDir;
  const loaded = loadConfig(options.env, overrides);
  const logger = options.logger ?? jsonLogger();
  // Listen first: the port is known before the service id (the public URL) is fixed, so
  // `--port 0` yields a real URL, and requests arriving while storage opens get a clear 503.
  let handler: RequestListener = starting;
  const server = createServer({ connectionsCheckingInterval: checkingIntervalMs(loaded.connections) },
    (req, res) => handler(req, res));
  server.keepAliveTimeout = KEEP_ALIVE_MS;
  server.listen(loaded.port, loaded.host);
  await once(server, 'listening');
  // Header and request timeouts, connections per client and in all (issue 22 item 2).
  const metrics = new Metrics();
  const connections = guardConnections(server, loaded.connections, { trustProxy: loaded.trustProxy, logger, metrics });
  const port = (server.address() as AddressInfo).port;
  const config: Config = loaded.publicUrlConfigured ? loaded : { ...loaded, publicUrl: `http://localhost:${port}` };
  logger.info('iki service starting: opening the storage (requests get 503 SERVICE_STARTING meanwhile)', { port });
  let storage: Awaited<ReturnType<typeof openStorage>>;
  let crypto: Awaited<ReturnType<LicenseCryptoFactory>>;
  let pooled: PooledLicenseCrypto | undefined;
  let root: Awaited<ReturnType<typeof loadRootSecret>>;
  try {
    root = await loadRootSecret(config.rootSecret?.reveal(), config.dataDir, logger);
    crypto = options.crypto === undefined
      ? (pooled = await pooledCrypto(root, config.publicUrl, config.ops.workers, {
        recycleBytes: config.ops.workerRecycleMb * 1024 * 1024,
        recycleIdleMs: config.ops.workerRecycleIdleSeconds * 1000, logger }))
      : await options.crypto(root, config.publicUrl);
    storage = await openStorage({ ...config, databaseUrl: config.databaseUrl?.reveal() });
  } catch (err) {
    server.close();
    connections.close();
    await pooled?.close();
    throw err;
  }
  if (storage.staleLock !== undefined) {
    // Issue 23 item 9: a takeover is worth a line; the previous process did not stop cleanly.
    logger.warn('took over a stale db.lock: its process is no longer running', { ...storage.staleLock });
  }
  const smtp = options.mailer === undefined ? startSmtp(config, logger) : undefined;
  const mailer = options.mailer ?? smtp;
  const pool = crypto instanceof PooledLicenseCrypto ? crypto.pool : undefined;
  metrics.watchPool(pool);
  const transfers = new TransferGuard(config.connections, logger, metrics);
  const drain = new Drain();
  const floor = config.ops.minFreeMb * 1024 * 1024;
  const probes: Probe[] = [databaseProbe(storage.db, config.storage.instanceId),
    blobProbe(config.blobStore, storage.db, config.dataDir, floor, storage.blobs),
    ...(storage.db.engine === 'pglite' ? [dataDirProbe(config.dataDir, floor)] : []),
    ...(pool === undefined ? [] : [workersProbe(pool)])];
  const secrets = secretBox(root);
  try {
    // docs/format.md §8.5: secrets stored before they were sealed are sealed before serving.
    const sealed = await sealStoredSecrets(storage.db, secrets);
    if (sealed.webhook_endpoints + sealed.shop_connections > 0) logger.info('sealed stored secrets', sealed);
  } catch (err) {
    server.close();
    connections.close();
    await storage.close();
    await pooled?.close();
    throw err;
  }
  const services = createServices({ config, repo: storage.repo, blobs: storage.blobs, crypto, root, logger, secrets,
    ...(pool === undefined ? {} : { hasher: new PooledPasswordHasher(config.passwordHashing, pool) }),
    ...(mailer === undefined ? {} : { mailer }) });
  const accessLogger = config.ops.accessLog ? logger : undefined;
  const now = () => new Date();
  const app = createApp(services, {
    bodyLimits: config.bodyLimits, releaseLimits: config.releaseLimits, signInLimits: config.signInLimits,
    mailLimits: config.mailLimits, quotas: config.quotas, trustProxy: config.trustProxy,
    service: config.publicUrl, publicUrlConfigured: config.publicUrlConfigured, corsOrigins: config.corsOrigins,
    logger, now,
    ops: [accessLog(accessLogger, metrics), transfers.middleware, drain.middleware,
      healthRoutes({ probes, draining: () => drain.draining(), metrics, metricsToken: config.ops.metricsToken, logger })],
  });
  // Issue 28 item 1: the key release in front of Express, with the same checks, limits,
  // errors, log line and metrics; everything it declines goes on to Express.
  const fast = options.releaseFastPath === false ? undefined : releaseFastPath({
    licenses: services.licenses, authenticate: (token) => services.accounts.authenticate(token, false, true),
    bodyLimits: config.bodyLimits, releaseLimits: config.releaseLimits, now, service: config.publicUrl,
    trust: { off: (config.trustProxy ?? false) === false, fn: app.get('trust proxy fn') as (addr: string, i: number) => boolean },
    logger, accessLogger, metrics, transfers, drain });
  let fastReleases = 0;
  handler = fast === undefined ? app : (req, res) => {
    if (fast(req, res)) fastReleases += 1;
    else app(req, res);
  };
  // Issue 26 item 4: every instance delivers the webhook outbox.
  const webhooks = new WebhookDeliverer({ repo: storage.repo, now: () => new Date(), logger, settings: config.webhooks, secrets,
    mailer: mailer ?? logMailer(logger) });
  webhooks.start();
  // Issue 29 item 3: every instance sweeps for flags; each is raised once (services/flags-sweep.ts).
  const flags = new FlagSweeper({ repo: storage.repo, now: () => new Date(), settings: config.flags, logger });
  flags.start();
  logger.info('iki service listening', { port, url: config.publicUrl, engine: storage.db.engine, blobStore: config.blobStore,
    crypto: options.crypto === undefined ? 'wasm' : 'custom', workers: pool?.size ?? 0 });
  return {
    url: `http://${config.host}:${port}`,
    port,
    config,
    metrics,
    services,
    repo: storage.repo,
    fastReleases: () => fastReleases,
    db: storage.db,
    async close(closeOptions = {}) {
      const { cut } = await drain.drain(server, { graceMs: closeOptions.graceMs ?? 0, delayMs: closeOptions.delayMs ?? 0 }, logger);
      connections.close();
      if (closeOptions.graceMs !== undefined) logger.info('iki service stopped', { drained: !cut });
      // Resent links go out after their answer; let them reach the SMTP server (each step has
      // a timeout) before the transport and the database close under them.
      await services.accounts.settled();
      await webhooks.stop();
      await flags.stop();
      smtp?.close();
      await storage.close();
      if (crypto instanceof PooledLicenseCrypto) await crypto.close();
      if (crypto instanceof WasmLicenseCrypto) crypto.free();
      secrets.destroy();
      root.destroy();
    },
  };
}

/**
 * The SMTP mailer when IKI_SMTP_URL is set, else undefined (`createServices` then logs links).
 * The start does not wait for the SMTP server: mail is not needed to serve, and an outage
 * there should not keep licenses and keys from being served. A background check warns early.
 */
function startSmtp(config: Config, logger: Logger): SmtpMailer | undefined {
  if (config.mail === undefined) {
    logger.info('no SMTP configured (IKI_SMTP_URL): e-mail verification links are written to this log');
    return undefined;
  }
  const { smtp } = config.mail;
  // Host and port only: the user name and password stay out of the log.
  logger.info('verification e-mails go over SMTP', { host: smtp.host, port: smtp.port,
    tls: smtp.secure ? 'implicit' : `starttls ${smtp.startTls}` });
  if (mayCrossNetworkInPlainText(smtp)) {
    logger.warn('IKI_SMTP_STARTTLS is not "required": the SMTP password and the verification links may cross '
      + 'the network in plain text', { host: smtp.host, port: smtp.port });
  }
  const mailer = smtpMailer(config.mail, { logger, verificationTtlSeconds: config.verificationTtlSeconds });
  void mailer.check();
  return mailer;
}

/** Answers every request while the service is still opening its storage. */
function starting(req: Parameters<RequestListener>[0], res: Parameters<RequestListener>[1]): void {
  const requestId = newRequestId();
  if (req.url === '/healthz') {
    // Alive, if not ready: a liveness check must not restart a service that is still migrating.
    res.writeHead(200, { 'content-type': 'application/json', 'x-request-id': requestId });
    res.end(JSON.stringify({ status: 'ok' }));
    return;
  }
  res.writeHead(503, { 'content-type': 'application/json', 'retry-after': '1', 'x-request-id': requestId });
  const code: ErrorCode = 'SERVICE_STARTING';
  res.end(JSON.stringify({ error: { code, message: 'the service is starting; retry shortly', requestId } }));
}

const invokedDirectly = process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href;
/** Command-line options (`--port N --data DIR`) override the environment. */
function cliOptions(argv: string[]): ServeOptions {
  const { values } = parseArgs({ args: argv, options: { port: { type: 'string' }, data: { type: 'string' } } });
  const options: ServeOptions = {};
  if (values.port !== undefined) {
    const port = Number(values.port);
    if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error('--port must be 0 to 65535');
    options.port = port;
  }
  if (values.data !== undefined) options.dataDir = values.data;
  return options;
}

/**
 * Resolves when the process that started this one with an IPC channel (`iki serve`) has gone,
 * however it ended (the kernel closes the channel even after SIGKILL); never without a channel.
 */
function parentGone(): Promise<void> {
  if (process.channel === undefined) return new Promise(() => {});
  process.channel.unref();
  if (!process.connected) return Promise.resolve();
  return new Promise((resolve) => process.once('disconnect', () => resolve()));
}

if (invokedDirectly) {
  const orphaned = parentGone();
  const logger = jsonLogger();
  Promise.resolve().then(() => serve({ ...cliOptions(process.argv.slice(2)), logger })).then((running) => {
    // One plain line for the person who started it, beside the JSON log: where to go.
    flushLog();
    process.stderr.write(`iki service ready at ${running.config.publicUrl}/ (listening on ${running.url}; Ctrl-C stops it)\n`);
    let stopping = false;
    const { drainSeconds, drainDelaySeconds } = running.config.ops;
    const stop = (why: string, drains: boolean) => () => {
      if (stopping) return;
      stopping = true;
      logger.info(`${why}: stopping`, drains ? { drainDelaySeconds, drainSeconds } : {});
      running.close(drains ? { graceMs: drainSeconds * 1000, delayMs: drainDelaySeconds * 1000 } : { graceMs: 0 })
        .then(() => process.exit(0), () => process.exit(1));
    };
    // Ctrl-C is a person at a terminal: stop now. SIGTERM is a supervisor: drain first. The
    // end of `iki serve` is a SIGTERM nobody could send (issue 23 item 4).
    process.once('SIGINT', stop('SIGINT', false));
    process.once('SIGTERM', stop('SIGTERM', true));
    void orphaned.then(stop('the iki serve process that started this service is gone', true));
  }, (err: unknown) => {
    flushLog();
    process.stderr.write(startFailureLine(err));
    process.exit(1);
  });
}
