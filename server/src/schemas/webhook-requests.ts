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
