/**
 * The OpenAPI operations and schemas of signed webhooks (issue 26 item 4); merged into the
 * document through openapi-sell.ts.
 */
import type { ErrorCode } from './errors.js';
import type { Op } from './openapi.js';
import { DELIVERY_ID_PATTERN, DELIVERY_LOG_LIMIT, MAX_WEBHOOK_ENDPOINTS, WEBHOOK_ID_PATTERN } from './services/webhooks.js';
import { WEBHOOK_EVENT_TYPES } from './storage/webhook-records.js';
import { MAX_SHOP_PRODUCTS, SHOP_ID_PATTERN } from './services/shop-sales.js';

const AUTH: ErrorCode[] = ['UNAUTHENTICATED', 'EMAIL_NOT_VERIFIED'];
const BODY: ErrorCode[] = ['MALFORMED_JSON', 'VALIDATION_FAILED', 'PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE'];
const base = { auth: true, scope: 'webhooks:write', tag: 'webhooks' } as const;

/** The webhook operations. */
export const WEBHOOK_OPS: Op[] = [
  { ...base, method: 'get', path: '/api/webhooks', summary: 'The seller\'s webhook endpoints',
    ok: { status: 200, schema: 'WebhookList', description: 'Newest first; never a secret.' }, errors: AUTH },
  { ...base, method: 'post', path: '/api/webhooks', summary: 'Register a webhook endpoint', body: { schema: 'CreateWebhookRequest' },
    ok: { status: 201, schema: 'CreatedWebhook', description: 'The endpoint with its signing secret, shown this once.' },
    errors: [...AUTH, ...BODY, 'WEBHOOK_LIMIT_REACHED'],
    description: 'Each event of the chosen types on the seller\'s masters and licenses is written to an outbox in the'
      + ' transaction of the change and POSTed as a WebhookEvent (application/json) with Iki-Signature: t=<unix>,v1=<hex'
      + ' HMAC-SHA256(secret, "<t>.<raw body>")> (docs/format.md §14; verifyWebhookSignature in @iki/core, tolerance'
      + ' 300 s), Iki-Event-Id and Iki-Event-Type. Any 2xx answer within IKI_WEBHOOK_TIMEOUT_MS is a delivery; anything'
      + ' else (a redirect too: none is followed) is retried after 1, 2, 4, ... minutes (at most 6 hours apart) for'
      + ' IKI_WEBHOOK_RETRY_HOURS (72); an endpoint whose deliveries all failed that long is disabled. Deliveries are at'
      + ' least once: deduplicate by event id. Destinations resolving to private, loopback, link-local or reserved'
      + ` addresses are refused on every attempt. At most ${MAX_WEBHOOK_ENDPOINTS} endpoints per seller.` },
  { ...base, method: 'delete', path: '/api/webhooks/{webhookId}', summary: 'Delete a webhook endpoint and its deliveries',
    ok: { status: 204, description: 'Deleted.' }, errors: ['MALFORMED_REQUEST', ...AUTH, 'WEBHOOK_NOT_FOUND'] },
  { ...base, method: 'post', path: '/api/webhooks/{webhookId}/enable', summary: 'Enable a webhook endpoint',
    ok: { status: 200, schema: 'Webhook', description: 'The endpoint, enabled, its failure run forgotten; pending deliveries resume.' },
    errors: ['MALFORMED_REQUEST', ...AUTH, 'WEBHOOK_NOT_FOUND'] },
  { ...base, method: 'post', path: '/api/webhooks/{webhookId}/disable', summary: 'Disable a webhook endpoint',
    ok: { status: 200, schema: 'Webhook', description: 'The endpoint, disabled: nothing is queued or sent for it meanwhile.' },
    errors: ['MALFORMED_REQUEST', ...AUTH, 'WEBHOOK_NOT_FOUND'] },
  { ...base, method: 'get', path: '/api/webhooks/{webhookId}/deliveries', summary: 'The endpoint\'s delivery log',
    ok: { status: 200, schema: 'WebhookDeliveryList', description: `The newest ${DELIVERY_LOG_LIMIT} deliveries.` },
    errors: ['MALFORMED_REQUEST', ...AUTH, 'WEBHOOK_NOT_FOUND'] },
  { ...base, method: 'post', path: '/api/webhooks/{webhookId}/deliveries/{deliveryId}/resend', summary: 'Send a delivery again',
    ok: { status: 200, schema: 'WebhookDelivery', description: 'The delivery, pending again now, with the same event id.' },
    errors: ['MALFORMED_REQUEST', ...AUTH, 'WEBHOOK_NOT_FOUND', 'WEBHOOK_DELIVERY_NOT_FOUND'] },
  { ...base, tag: 'shops', method: 'get', path: '/api/shops', summary: 'The seller\'s connected shops',
    ok: { status: 200, schema: 'ShopList', description: 'Newest first; never a signing secret.' }, errors: AUTH },
  { ...base, tag: 'shops', method: 'post', path: '/api/shops', summary: 'Connect a Stripe account', body: { schema: 'CreateShopRequest' },
    ok: { status: 201, schema: 'Shop', description: 'The connection; give Stripe the service\'s URL + endpointPath.' },
    errors: [...AUTH, ...BODY, 'MASTER_NOT_FOUND'],
    description: `Maps 1 to ${MAX_SHOP_PRODUCTS} Stripe price or product ids (or a Checkout Session's metadata iki_product) to`
      + ' the seller\'s masters. Stripe then sends checkout.session.completed, charge.refunded and charge.dispute.created to'
      + ' POST /api/shops/{shopId}/stripe.' },
  { ...base, tag: 'shops', method: 'post', path: '/api/shops/{shopId}/signing-secret', summary: 'Set or roll a shop\'s signing secret',
    body: { schema: 'ShopSecretRequest' }, ok: { status: 200, schema: 'Shop', description: 'The connection, its secret set.' },
    errors: ['MALFORMED_REQUEST', ...AUTH, ...BODY, 'SHOP_NOT_FOUND'] },
  { ...base, tag: 'shops', method: 'delete', path: '/api/shops/{shopId}', summary: 'Disconnect a shop',
    ok: { status: 204, description: 'Disconnected; its events are refused from now on (SHOP_NOT_FOUND).' },
    errors: ['MALFORMED_REQUEST', ...AUTH, 'SHOP_NOT_FOUND'] },
  { method: 'post', path: '/api/shops/{shopId}/stripe', auth: false, tag: 'shops', summary: 'A Stripe event (Stripe calls this)',
    body: { raw: ['application/json'], description: 'The event exactly as Stripe sent it (the signature covers these bytes).' },
    ok: { status: 200, schema: 'ShopOutcome', description: 'Received: what was done.' },
    errors: ['MALFORMED_REQUEST', 'SHOP_NOT_FOUND', 'SHOP_SIGNATURE_INVALID', 'MALFORMED_JSON', 'VALIDATION_FAILED',
      'PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE', 'ACCOUNT_NOT_FOUND', 'ACCOUNT_AMBIGUOUS', 'MASTER_ARCHIVED',
      'LICENSE_CREATION_THROTTLED'],
    description: 'Verified with Stripe-Signature (t=…,v1=HMAC-SHA256 of "<t>.<raw body>" with the connection\'s signing'
      + ' secret, 300 s tolerance). checkout.session.completed (paid) creates a license of the mapped master for'
      + ' customer_details.email (a verified account; ACCOUNT_NOT_FOUND otherwise, so Stripe retries), idempotently under'
      + ' the event id: the same event any number of times, on any instance, makes one license; its externalRef is the'
      + ' payment_intent (else the session id). charge.refunded and charge.dispute.created suspend or revoke the licenses'
      + ' whose externalRef is the charge\'s payment_intent (onRefund). Other events: 200, ignored.' },
  { method: 'post', path: '/api/shops/{shopId}/gumroad/{token}', auth: false, tag: 'shops', summary: 'A Gumroad sale ping (Gumroad calls this)',
    body: { raw: ['application/x-www-form-urlencoded'], description: 'Gumroad\'s ping fields (sale_id, email, product_id, product_permalink, refunded, disputed, ...).' },
    ok: { status: 200, schema: 'ShopOutcome', description: 'Received: what was done.' },
    errors: ['MALFORMED_REQUEST', 'SHOP_NOT_FOUND', 'VALIDATION_FAILED', 'PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE',
      'ACCOUNT_NOT_FOUND', 'ACCOUNT_AMBIGUOUS', 'MASTER_ARCHIVED', 'LICENSE_CREATION_THROTTLED'],
    description: 'The URL is the secret (the token is 32 random bytes shown once, in the connection\'s endpointPath; a wrong'
      + ' token is SHOP_NOT_FOUND). A sale of a mapped product creates a license for the buyer\'s e-mail idempotently under'
      + ' the sale_id (its externalRef); a ping with refunded or disputed true applies onRefund to that sale\'s licenses.' },
];

/** Path parameters of these operations. */
export const WEBHOOK_PATH_PARAMS: Record<string, { pattern: string; description: string }> = {
  webhookId: { pattern: WEBHOOK_ID_PATTERN, description: 'Webhook endpoint id.' },
  deliveryId: { pattern: DELIVERY_ID_PATTERN, description: 'Delivery id (from the delivery log).' },
  shopId: { pattern: SHOP_ID_PATTERN, description: 'Shop connection id.' },
  token: { pattern: '^[A-Za-z0-9_-]{43}$', description: 'The Gumroad ping URL\'s secret token.' },
};

const time = { type: 'string', format: 'date-time' } as const;
const nullableTime = { type: ['string', 'null'], format: 'date-time' } as const;
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/** Response schemas of these operations, and the event every delivery carries. */
export const WEBHOOK_SCHEMAS: Record<string, unknown> = {
  Webhook: { type: 'object', required: ['webhookId', 'url', 'events', 'createdAt', 'enabled', 'disabledAt', 'disabledReason', 'failingSince'],
    properties: {
      webhookId: { type: 'string', pattern: WEBHOOK_ID_PATTERN }, url: { type: 'string' },
      events: { type: 'array', items: { enum: [...WEBHOOK_EVENT_TYPES] } }, createdAt: time, enabled: { type: 'boolean' },
      disabledAt: nullableTime, disabledReason: { type: ['string', 'null'], description: 'Why: the seller, or the failure run.' },
      failingSince: { ...nullableTime, description: 'First failure of the current run of failed deliveries, or null.' },
    } },
  WebhookList: { type: 'object', required: ['webhooks'], properties: { webhooks: { type: 'array', items: ref('Webhook') } } },
  CreatedWebhook: { allOf: [ref('Webhook'), { type: 'object', required: ['secret'], properties: {
    secret: { type: 'string', pattern: '^whsec_[A-Za-z0-9_-]{43}$', description: 'The signing secret, shown this once.' } } }] },
  WebhookDelivery: { type: 'object', required: ['deliveryId', 'eventId', 'type', 'occurredAt', 'state', 'attempts', 'lastAttemptAt',
    'lastStatus', 'lastError', 'nextAttemptAt', 'deliveredAt'], properties: {
    deliveryId: { type: 'string', pattern: DELIVERY_ID_PATTERN }, eventId: { type: 'string', pattern: '^evt_[0-9a-f]{32}$' },
    type: { enum: [...WEBHOOK_EVENT_TYPES] }, occurredAt: time, state: { enum: ['pending', 'delivered', 'failed'] },
    attempts: { type: 'integer', minimum: 0 }, lastAttemptAt: nullableTime,
    lastStatus: { type: ['integer', 'null'], description: 'HTTP status of the last answer, or null (no answer).' },
    lastError: { type: ['string', 'null'], description: 'bad_url, refused_destination, timeout, network, redirect or http_status.' },
    nextAttemptAt: nullableTime, deliveredAt: nullableTime,
  } },
  WebhookDeliveryList: { type: 'object', required: ['deliveries'], properties: { deliveries: { type: 'array', items: ref('WebhookDelivery') } } },
  Shop: { type: 'object', required: ['shopId', 'kind', 'endpointPath', 'products', 'onRefund', 'signingSecretSet', 'createdAt'], properties: {
    signingSecretSet: { type: 'boolean', description: 'Events are refused (SHOP_SIGNATURE_INVALID) until it is set.' },
    shopId: { type: 'string', pattern: SHOP_ID_PATTERN }, kind: { enum: ['stripe', 'gumroad'] },
    endpointPath: { type: 'string', description: 'Append to the service\'s public URL: the URL to enter in Stripe, or Gumroad\'s'
      + ' ping URL (its token only in the creation\'s answer).' },
    products: { type: 'object', additionalProperties: { type: 'string' } }, onRefund: { enum: ['suspend', 'revoke', 'none'] },
    createdAt: time } },
  ShopList: { type: 'object', required: ['shops'], properties: { shops: { type: 'array', items: ref('Shop') } } },
  ShopOutcome: { type: 'object', required: ['received', 'action', 'licenseIds'], properties: {
    received: { const: true }, action: { enum: ['license_created', 'license_replayed', 'licenses_changed', 'ignored'] },
    licenseIds: { type: 'array', items: { type: 'string' } } } },
  WebhookEvent: { type: 'object', required: ['id', 'type', 'createdAt', 'data'],
    description: 'The body of every delivery, one shape for every type.', properties: {
      id: { type: 'string', pattern: '^evt_[0-9a-f]{32}$', description: 'The event id: the same on every attempt and resend.' },
      type: { enum: [...WEBHOOK_EVENT_TYPES] }, createdAt: time,
      data: { type: 'object', required: ['masterId', 'licenseId', 'actorId', 'details'], properties: {
        masterId: { type: 'string' }, licenseId: { type: ['string', 'null'] },
        actorId: { type: 'string', description: 'The account that made the change; `system` for license.expired, the '
          + 'refused licensee for rate_limit.exceeded.' },
        details: { type: 'object', description: 'As in the license history (licensee, externalRef, expiresAt, reason, apiKeyId, ...). '
          + 'license.expired: {expiresAt}, written once per license by the delivery poll at or after expiresAt (none for a '
          + 'revoked license). rate_limit.exceeded: {limit: key_release|copy, scope: license|user, windowSeconds, retryAt}, '
          + 'when a key release or a copy download is refused by its rate limit, at most once per license per windowSeconds. '
          + 'license.flagged (actorId system): {flag: {id, rule, raisedAt, windowStart, windowEnd, value, threshold}}, once per '
          + 'license, rule and window (GET /api/seller/flags).' },
      } },
    } },
};
