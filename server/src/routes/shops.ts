/**
 * Routes of connected shops (issue 26 item 5): the seller's connections (scope
 * `webhooks:write` for API keys) and the shop's own, unauthenticated event route, which
 * `ShopSales` verifies with the connection's signing secret. HTTP only.
 */
import { ApiError } from '../errors.js';
import { createShopBody, shopSecretBody, type CreateShopInput } from '../schemas/webhook-requests.js';
import { validate } from '../schemas/validate.js';
import { SHOP_ID_PATTERN, type ShopSales } from '../services/shop-sales.js';
import { callerOf, rawType, readRaw, requireJson, type RouteDef } from './http.js';

const SHOP_ID = new RegExp(SHOP_ID_PATTERN);

const shopId = (value: unknown): string => {
  if (typeof value !== 'string' || !SHOP_ID.test(value)) throw new ApiError('SHOP_NOT_FOUND', 'no such shop');
  return value;
};

/** The shop routes. */
export function shopRoutes(shops: ShopSales, jsonLimit: number): RouteDef[] {
  return [
    {
      method: 'get', path: '/api/shops', auth: true, scope: 'webhooks:write',
      async handler(_req, res) {
        res.json({ shops: await shops.list(callerOf(res)) });
      },
    },
    {
      method: 'post', path: '/api/shops', auth: true, scope: 'webhooks:write',
      async handler(req, res) {
        const input = validate<CreateShopInput>(createShopBody, await requireJson(req, jsonLimit));
        res.status(201).json(await shops.create(callerOf(res), { kind: input.kind, signingSecret: input.signingSecret ?? '', products: input.products,
          onRefund: input.onRefund ?? 'suspend' }));
      },
    },
    {
      method: 'post', path: '/api/shops/{shopId}/signing-secret', auth: true, scope: 'webhooks:write',
      async handler(req, res) {
        const input = validate<{ signingSecret: string }>(shopSecretBody, await requireJson(req, jsonLimit));
        res.json(await shops.setSecret(callerOf(res), shopId(req.params['shopId']), input.signingSecret));
      },
    },
    {
      method: 'delete', path: '/api/shops/{shopId}', auth: true, scope: 'webhooks:write',
      async handler(req, res) {
        await shops.remove(callerOf(res), shopId(req.params['shopId']));
        res.status(204).end();
      },
    },
    {
      method: 'post', path: '/api/shops/{shopId}/stripe', auth: false,
      async handler(req, res) {
        const id = shopId(req.params['shopId']);
        rawType(req, ['application/json']);
        const raw = await readRaw(req, jsonLimit);
        res.json(await shops.stripeEvent(id, raw, req.get('stripe-signature')));
      },
    },
    {
      method: 'post', path: '/api/shops/{shopId}/gumroad/{token}', auth: false,
      async handler(req, res) {
        const id = shopId(req.params['shopId']);
        const token = req.params['token'];
        if (typeof token !== 'string' || !/^[A-Za-z0-9_-]{43}$/.test(token)) throw new ApiError('SHOP_NOT_FOUND', 'no such shop');
        rawType(req, ['application/x-www-form-urlencoded']);
        const raw = await readRaw(req, jsonLimit);
        let text: string;
        try {
          text = new TextDecoder('utf-8', { fatal: true }).decode(raw);
        } catch {
          throw new ApiError('VALIDATION_FAILED', 'the ping is not UTF-8');
        }
        res.json(await shops.gumroadPing(id, token, new URLSearchParams(text)));
      },
    },
  ];
}
