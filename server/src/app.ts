/**
 * Builds the Express application from injected services (no globals, no environment), and the
 * services from their dependencies. `main.ts` wires the real storage and crypto port; tests
 * wire the in-memory repository or a real database and a test-only crypto fake.
 */
import express, { type Express, type RequestHandler } from 'express';
import { ACCOUNT_DEFAULTS } from './account-config.js';
import type { BodyLimits, Config, MailLimits, QuotaLimits, ReleaseLimits, SignInLimits, TrustProxy } from './config.js';
import { errorHandler, notFoundHandler } from './errors.js';
import type { Logger } from './logger.js';
import { buildOpenApi } from './openapi.js';
import { accountRoutes } from './routes/accounts.js';
import { corsHandler } from './routes/cors.js';
import { mount, requestId, requestOrigin, type RouteDef } from './routes/http.js';
import { keyRoutes } from './routes/keys.js';
import { licenseRoutes } from './routes/licenses.js';
import { masterRoutes } from './routes/masters.js';
import { forwardedForWarning } from './routes/proxy-warning.js';
import { sessionRoutes } from './routes/sessions.js';
import { webRoutes } from './routes/web.js';
import { downloadRoutes } from './routes/downloads.js';
import { apiKeyRoutes, sellerRoutes } from './routes/seller.js';
import { webhookRoutes } from './routes/webhooks.js';
import { shopRoutes } from './routes/shops.js';
import { ShopSales } from './services/shop-sales.js';
import { WebhookService } from './services/webhooks.js';
import { API_KEY_PREFIX, ApiKeyService } from './services/api-keys.js';
import type { RootSecret } from './secrets.js';
import { AccountService } from './services/accounts.js';
import type { LicenseCrypto } from './services/crypto-port.js';
import { KeyService } from './services/keys.js';
import { LicenseService } from './services/licenses.js';
import { ActivityService } from './services/activity.js';
import { activityAddressKey } from './services/activity-address.js';
import { FlagService } from './services/flags.js';
import { activityRoutes } from './routes/activity.js';
import { logMailer, type Mailer } from './services/mailer.js';
import { MasterService } from './services/masters.js';
import { PasswordReset } from './services/password-reset.js';
import { PasswordHasher } from './services/passwords.js';
import { SessionService } from './services/sessions.js';
import { TokenService } from './services/tokens.js';
import { UsageLimiter } from './services/usage-limits.js';
import type { BlobStore } from './storage/blobs.js';
import type { Repository } from './storage/repository.js';
import { withRequestOrigin } from './services/link-base.js';

/** The services behind the routes. */
export interface AppServices {
  accounts: AccountService;
  sessions: SessionService;
  passwordReset: PasswordReset;
  masters: MasterService;
  licenses: LicenseService;
  keys: KeyService;
  apiKeys: ApiKeyService;
  webhooks: WebhookService;
  shops: ShopSales;
  /** Activity and flags (issue 29). */
  activity: ActivityService;
  flags: FlagService;
}

/** What the HTTP layer needs besides the services. */
export interface AppOptions {
  bodyLimits: BodyLimits;
  releaseLimits: ReleaseLimits;
  signInLimits: SignInLimits;
  mailLimits: MailLimits;
  /** Upload, copy and identify limits (stated in the OpenAPI document). */
  quotas: QuotaLimits;
  /** Express's `trust proxy` (config `IKI_TRUST_PROXY`); `false` when absent. */
  trustProxy?: TrustProxy;
  /** The service identifier (public base URL). */
  service: string;
  /**
   * Whether `service` was configured (IKI_PUBLIC_URL). When false, the OpenAPI document's
   * server is the address the request was sent to, like mailed links.
   */
  publicUrlConfigured?: boolean;
  /** Origins of other sites' apps that may call the API with bearer tokens (IKI_CORS_ORIGINS); none when absent. */
  corsOrigins?: readonly string[];
  logger: Logger;
  now: () => Date;
  /**
   * Operational middleware mounted right after the request id, before every route: the access
   * log and metrics, the drain marker, `/healthz`, `/readyz`, `/metrics` (main.ts, `ops/`).
   */
  ops?: RequestHandler[];
}

/** Dependencies from which `createServices` builds the services. */
export interface ServiceDeps {
  config: Config;
  repo: Repository;
  blobs: BlobStore;
  crypto: LicenseCrypto;
  root: RootSecret;
  logger: Logger;
  mailer?: Mailer;
  now?: () => Date;
  /** Password hashing; by default on this thread (main.ts passes the worker pool's). */
  hasher?: PasswordHasher;
}

/** Builds every service from storage, the crypto port and the configuration. */
export function createServices(deps: ServiceDeps): AppServices {
  const { config, repo, blobs, crypto } = deps;
  const now = deps.now ?? (() => new Date());
  const seed = deps.root.accessTokenSeed();
  const tokens = new TokenService({ issuer: config.publicUrl, ttlSeconds: config.accessTokenTtlSeconds,
    seed, oidc: config.oidc, now });
  seed.fill(0);
  const limiter = new UsageLimiter({ repo, now, limits: config.quotas });
  const { accountSettings: settings } = config;
  const sessions = new SessionService({ repo, tokens, now,
    lifetime: { idleSeconds: settings.sessionIdleSeconds, maxSeconds: settings.sessionMaxSeconds },
    reuseGraceSeconds: settings.refreshReuseGraceSeconds ?? ACCOUNT_DEFAULTS.refreshReuseGraceSeconds });
  const hasher = deps.hasher ?? new PasswordHasher(config.passwordHashing);
  const mailer = deps.mailer ?? logMailer(deps.logger);
  const accounts = new AccountService({ repo, hasher, tokens, sessions,
    mailer, now, publicUrl: config.publicUrl,
    verificationTtlSeconds: config.verificationTtlSeconds, signInLimits: config.signInLimits,
    addressKey: deps.root.signInAddressKey(), mailLimits: config.mailLimits,
    mailAddressKey: deps.root.mailAddressKey(), mailsTotal: settings.mailsTotal, logger: deps.logger });
  const licenses = new LicenseService({ repo, crypto, blobs, now, limits: config.releaseLimits,
    identifyLimits: config.quotas.identify, limiter, service: config.publicUrl,
    identifyBudgetMs: config.identifyBudgetMs,
    licensesPerSellerPerHour: settings.licensesPerSellerPerHour, addressKey: activityAddressKey(deps.root) });
  return {
    accounts,
    sessions,
    passwordReset: new PasswordReset({ repo, hasher, mailer, mail: accounts.mail, now, publicUrl: config.publicUrl,
      ttlSeconds: settings.passwordResetTtlSeconds }),
    masters: new MasterService({ repo, blobs, crypto, now, limiter, limits: config.quotas.uploads }),
    licenses,
    keys: new KeyService({ repo, crypto, now }),
    apiKeys: new ApiKeyService({ repo, now }),
    webhooks: new WebhookService({ repo, now, allowPrivate: config.webhooks.allowPrivate }),
    shops: new ShopSales({ repo, sales: licenses.sales, now }),
    activity: new ActivityService({ repo, now, limits: config.releaseLimits }),
    flags: new FlagService({ repo, now }),
  };
}

/** Every route of the API, in mounting order (masters before `/api/licenses/{licenseId}`). */
export function appRoutes(services: AppServices, options: AppOptions): RouteDef[] {
  const { bodyLimits, releaseLimits } = options;
  const openapi = buildOpenApi(options);
  return [
    {
      method: 'get', path: '/api/openapi.json', auth: false,
      async handler(req, res) {
        const origin = options.publicUrlConfigured === false ? requestOrigin(req) : undefined;
        res.json(origin === undefined ? openapi : { ...openapi, servers: [{ url: origin }] });
      },
    },
    ...accountRoutes(services.accounts, services.passwordReset, bodyLimits.jsonBytes),
    ...sessionRoutes(services.accounts, services.sessions, bodyLimits.jsonBytes),
    ...masterRoutes(services.masters, services.licenses, bodyLimits),
    ...licenseRoutes(services.licenses, bodyLimits, releaseLimits, options.now),
    ...keyRoutes(services.keys, bodyLimits.jsonBytes, options.service),
    ...apiKeyRoutes(services.apiKeys, bodyLimits.jsonBytes),
    ...sellerRoutes(services.licenses.sales, bodyLimits.jsonBytes),
    ...webhookRoutes(services.webhooks, bodyLimits.jsonBytes),
    ...shopRoutes(services.shops, bodyLimits.jsonBytes),
    ...activityRoutes(services.activity, services.flags),
    ...downloadRoutes(),
  ];
}

/** The Express application. */
export function createApp(services: AppServices, options: AppOptions): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', options.trustProxy ?? false);
  app.set('etag', false);
  app.use(requestId);
  if (options.publicUrlConfigured === false) {
    // Without IKI_PUBLIC_URL, links made while answering point to the address the request was
    // sent to (services/link-base.ts).
    app.use((req, _res, next) => {
      const origin = requestOrigin(req);
      if (origin === undefined) next();
      else withRequestOrigin(origin, next);
    });
  }
  const https = options.service.startsWith('https:');
  for (const handler of options.ops ?? []) app.use(handler);
  app.use((_req, res, next) => {
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Cache-Control', 'no-store');
    // Issue 15 item 15: a service reached over https tells browsers never to try http again.
    if (https) res.setHeader('Strict-Transport-Security', 'max-age=31536000');
    next();
  });
  if ((options.trustProxy ?? false) === false) app.use(forwardedForWarning(options.logger));
  app.use(corsHandler(options.service, options.corsOrigins ?? []));
  app.use(webRoutes());
  const router = express.Router({ caseSensitive: true, strict: false });
  mount(router, appRoutes(services, options), async (token, allowUnverified, deferSessionCheck) => {
    if (!token.startsWith(API_KEY_PREFIX)) return services.accounts.authenticate(token, allowUnverified, deferSessionCheck);
    const key = await services.apiKeys.authenticate(token);
    return { accountId: key.accountId, sessionId: undefined, apiKey: { id: key.apiKeyId, scopes: key.scopes } };
  });
  app.use(router);
  app.use(notFoundHandler);
  app.use(errorHandler(options.logger));
  return app;
}
