/**
 * Routes of a seller's webhook endpoints (issue 26 item 4), scope `webhooks:write` for API
 * keys. HTTP only: parse, validate, call `WebhookService`, shape the answer.
 */
import type { Request } from 'express';
import { createWebhookBody, type CreateWebhookInput } from '../schemas/webhook-requests.js';
import { validate } from '../schemas/validate.js';
import { DELIVERY_ID_PATTERN, WEBHOOK_ID_PATTERN, type WebhookService } from '../services/webhooks.js';
import { callerOf, param, requireJson, type RouteDef } from './http.js';

const WEBHOOK_ID = new RegExp(WEBHOOK_ID_PATTERN);
const DELIVERY_ID = new RegExp(DELIVERY_ID_PATTERN);

/** The webhook routes. */
export function webhookRoutes(webhooks: WebhookService, jsonLimit: number): RouteDef[] {
  const id = (req: Request) => param(req, 'webhookId', WEBHOOK_ID, 'WEBHOOK_NOT_FOUND');
  return [
    {
      method: 'get', path: '/api/webhooks', auth: true, scope: 'webhooks:write',
      async handler(_req, res) {
        res.json({ webhooks: await webhooks.list(callerOf(res)) });
      },
    },
    {
      method: 'post', path: '/api/webhooks', auth: true, scope: 'webhooks:write',
      async handler(req, res) {
        const input = validate<CreateWebhookInput>(createWebhookBody, await requireJson(req, jsonLimit));
        const created = await webhooks.create(callerOf(res), input.url, input.events);
        res.status(201).json(created);
      },
    },
    {
      method: 'delete', path: '/api/webhooks/{webhookId}', auth: true, scope: 'webhooks:write',
      async handler(req, res) {
        await webhooks.remove(callerOf(res), id(req));
        res.status(204).end();
      },
    },
    {
      method: 'post', path: '/api/webhooks/{webhookId}/enable', auth: true, scope: 'webhooks:write',
      async handler(req, res) {
        res.json(await webhooks.setEnabled(callerOf(res), id(req), true));
      },
    },
    {
      method: 'post', path: '/api/webhooks/{webhookId}/disable', auth: true, scope: 'webhooks:write',
      async handler(req, res) {
        res.json(await webhooks.setEnabled(callerOf(res), id(req), false));
      },
    },
    {
      method: 'get', path: '/api/webhooks/{webhookId}/deliveries', auth: true, scope: 'webhooks:write',
      async handler(req, res) {
        res.json({ deliveries: await webhooks.deliveries(callerOf(res), id(req)) });
      },
    },
    {
      method: 'post', path: '/api/webhooks/{webhookId}/deliveries/{deliveryId}/resend', auth: true, scope: 'webhooks:write',
      async handler(req, res) {
        const delivery = param(req, 'deliveryId', DELIVERY_ID, 'WEBHOOK_DELIVERY_NOT_FOUND');
        res.json(await webhooks.resend(callerOf(res), id(req), delivery));
      },
    },
  ];
}
