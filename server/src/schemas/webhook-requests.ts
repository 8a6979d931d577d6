/** Request bodies of the webhook operations (issue 26 item 4). */
import { MAX_WEBHOOK_URL_CHARS } from '../services/webhooks.js';
import { WEBHOOK_EVENT_TYPES, type WebhookEventType } from '../storage/webhook-records.js';

/** `POST /api/webhooks`. */
export const createWebhookBody = {
  $id: 'CreateWebhookRequest',
  type: 'object',
  additionalProperties: false,
  required: ['url', 'events'],
  properties: {
    url: { type: 'string', minLength: 8, maxLength: MAX_WEBHOOK_URL_CHARS, pattern: '^https?://[^\\u0000-\\u0020\\u007f-\\u009f]+$',
      description: 'Where events are POSTed: http or https, no user name or password; it must not resolve to a private,'
        + ' loopback or link-local address (unless IKI_WEBHOOK_ALLOW_PRIVATE=1).' },
    events: { type: 'array', minItems: 1, maxItems: WEBHOOK_EVENT_TYPES.length, uniqueItems: true,
      items: { type: 'string', enum: [...WEBHOOK_EVENT_TYPES] }, description: 'The event types sent to this endpoint.' },
  },
} as const;

/** A validated `CreateWebhookRequest`. */
export interface CreateWebhookInput {
  url: string;
  events: WebhookEventType[];
}

/** `POST /api/shops` (issue 26 item 5). */
export const createShopBody = {
  $id: 'CreateShopRequest',
  type: 'object',
  additionalProperties: false,
  required: ['kind', 'products'],
  properties: {
    kind: { enum: ['stripe', 'gumroad'], description: 'The shop: stripe, or gumroad (its sale ping on a secret URL).' },
    signingSecret: { type: 'string', minLength: 8, maxLength: 200, pattern: '^[\\x21-\\x7e]+$',
      description: 'The signing secret of the Stripe webhook endpoint (whsec_…), from Stripe\'s dashboard; may be set later'
        + ' (POST /api/shops/{shopId}/signing-secret), once Stripe shows it for the endpoint URL this answer names.' },
    products: { type: 'object', minProperties: 1, maxProperties: 100,
      propertyNames: { minLength: 1, maxLength: 200, pattern: '^[\\x21-\\x7e]+$' },
      additionalProperties: { type: 'string', pattern: '^mst_[0-9a-f]{32}$' },
      description: 'Stripe price or product id (or the session\'s metadata iki_product), or Gumroad product id or permalink'
        + ' -> the master it licenses.' },
    onRefund: { enum: ['suspend', 'revoke', 'none'], default: 'suspend',
      description: 'What charge.refunded and charge.dispute.created do to the payment\'s licenses.' },
  },
} as const;

/** A validated `CreateShopRequest`. */
export interface CreateShopInput {
  kind: 'stripe' | 'gumroad';
  signingSecret?: string;
  products: Record<string, string>;
  onRefund?: 'suspend' | 'revoke' | 'none';
}

/** `POST /api/shops/{shopId}/signing-secret`. */
export const shopSecretBody = {
  $id: 'ShopSecretRequest',
  type: 'object',
  additionalProperties: false,
  required: ['signingSecret'],
  properties: {
    signingSecret: { type: 'string', minLength: 8, maxLength: 200, pattern: '^[\\x21-\\x7e]+$',
      description: 'The signing secret Stripe shows for this endpoint (whsec_…); replaces the previous one.' },
  },
} as const;
