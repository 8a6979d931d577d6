/**
 * Sales become licenses (issue 26 item 5): a seller connects a Stripe account once (the
 * endpoint's signing secret from Stripe's dashboard, which price or product id licenses which
 * master, what a refund does), and Stripe's events at `POST /api/shops/{shopId}/stripe` are
 * verified as Stripe documents (`Stripe-Signature`, @iki/core's `verifyWebhookSignature`, 300 s
 * tolerance) and acted on:
 * - `checkout.session.completed` (paid): a license of the mapped master for the buyer's e-mail
 *   (`customer_details.email`), created idempotently under `stripe:<event id>` with the payment
 *   (`payment_intent`, else the session id) as its reference, so Stripe's retries and replays
 *   make one license;
 * - `charge.refunded`, `charge.dispute.created`: the licenses with that payment as their
 *   reference are suspended or revoked (`onRefund`), or left alone (`none`).
 * Other event types, and sessions without a mapped product, are answered 200 and ignored.
 *
 * Gumroad signs nothing: its sale ping goes to a secret URL, `/api/shops/{shopId}/gumroad/<token>`
 * with 32 random bytes shown once at connection. A sale (`sale_id`, `email`, `product_id` or
 * `product_permalink`) creates the license under `gumroad:<sale_id>` (reference: the sale id);
 * a ping with `refunded` or `disputed` true applies `onRefund` to that sale's licenses.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { verifyWebhookSignature } from '@iki/core';
import { ApiError } from '../errors.js';
import type { Repository } from '../storage/repository.js';
import type { RefundAction, ShopConnection } from '../storage/shop-records.js';
import type { LicenseSales } from './license-sales.js';
import type { SecretBox, SecretPlace } from './secret-box.js';

const shopPlace = (id: string): SecretPlace => ({ table: 'shop_connections', id });

/** Shop ids: `shop_` and 24 hex digits. */
export const SHOP_ID_PATTERN = '^shop_[0-9a-f]{24}$';
/** Mapped prices or products per shop at most. */
export const MAX_SHOP_PRODUCTS = 100;

/** A shop as the API answers it (never its secret). */
export interface ShopView {
  shopId: string;
  kind: 'stripe' | 'gumroad';
  /** The path to give Stripe as the endpoint URL (after the service's public URL). */
  endpointPath: string;
  products: Record<string, string>;
  onRefund: RefundAction;
  /** Whether the shop's signing secret is set (events are refused until it is). */
  signingSecretSet: boolean;
  createdAt: string;
}

/** What the shop's route answers. */
export interface ShopOutcome {
  received: true;
  action: 'license_created' | 'license_replayed' | 'licenses_changed' | 'ignored';
  licenseIds: string[];
}

const view = (s: ShopConnection): ShopView => ({ shopId: s.id, kind: s.kind,
  endpointPath: s.kind === 'stripe' ? `/api/shops/${s.id}/stripe` : `/api/shops/${s.id}/gumroad/<token shown once>`,
  products: s.products, onRefund: s.onRefund, signingSecretSet: s.secret !== '', createdAt: s.createdAt.toISOString() });

type Json = Record<string, unknown>;
const obj = (v: unknown): Json => (typeof v === 'object' && v !== null && !Array.isArray(v) ? v as Json : {});
const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/** Dependencies. */
export interface ShopSalesDeps {
  repo: Repository;
  sales: LicenseSales;
  now: () => Date;
  /** Seals the shops' secrets in storage (docs/format.md §8.5). */
  secrets: SecretBox;
}

/** Connected shops and their events. */
export class ShopSales {
  constructor(private readonly deps: ShopSalesDeps) {}

  /** Connects a Stripe account; every mapped master must be the seller's. */
  async create(sellerId: string, input: { kind: ShopConnection['kind']; signingSecret: string; products: Record<string, string>;
    onRefund: RefundAction; }): Promise<ShopView> {
    if (input.kind === 'gumroad' && input.signingSecret !== '') {
      throw new ApiError('VALIDATION_FAILED', 'a Gumroad shop has no signing secret: its ping URL is the secret',
        { errors: [{ path: '/signingSecret', message: 'must be absent for gumroad' }] });
    }
    const entries = Object.entries(input.products);
    if (entries.length === 0 || entries.length > MAX_SHOP_PRODUCTS) {
      throw new ApiError('VALIDATION_FAILED', `map 1 to ${MAX_SHOP_PRODUCTS} prices or products to masters`,
        { errors: [{ path: '/products', message: `must have 1 to ${MAX_SHOP_PRODUCTS} entries` }] });
    }
    for (const [, masterId] of entries) {
      const master = await this.deps.repo.findMaster(masterId);
      if (master === undefined || master.sellerId !== sellerId) throw new ApiError('MASTER_NOT_FOUND', `no master ${masterId} of yours`);
    }
    const secret = input.kind === 'gumroad' ? randomBytes(32).toString('base64url') : input.signingSecret;
    const id = `shop_${randomBytes(12).toString('hex')}`;
    const shop: ShopConnection = { id, sellerId, kind: input.kind, secret: this.deps.secrets.seal(secret, shopPlace(id)),
      products: { ...input.products }, onRefund: input.onRefund, createdAt: this.deps.now() };
    await this.deps.repo.shops.insertShop(shop);
    // The Gumroad ping URL carries its secret: shown this once.
    return input.kind === 'gumroad' ? { ...view(shop), endpointPath: `/api/shops/${shop.id}/gumroad/${secret}` } : view(shop);
  }

  async list(sellerId: string): Promise<ShopView[]> {
    return (await this.deps.repo.shops.listShops(sellerId)).map(view);
  }

  /** Sets (or rolls) the shop's signing secret. */
  async setSecret(sellerId: string, id: string, secret: string): Promise<ShopView> {
    const shop = await this.deps.repo.shops.setShopSecret(id, sellerId, this.deps.secrets.seal(secret, shopPlace(id)));
    if (shop === undefined) throw new ApiError('SHOP_NOT_FOUND', 'no such shop of yours');
    return view(shop);
  }

  async remove(sellerId: string, id: string): Promise<void> {
    if (!await this.deps.repo.shops.deleteShop(id, sellerId)) throw new ApiError('SHOP_NOT_FOUND', 'no such shop of yours');
  }

  /** Handles one Stripe event, its raw body and `Stripe-Signature` header. */
  async stripeEvent(shopId: string, raw: Uint8Array, header: string | undefined): Promise<ShopOutcome> {
    const shop = await this.deps.repo.shops.findShop(shopId);
    if (shop?.kind !== 'stripe') throw new ApiError('SHOP_NOT_FOUND', 'no such shop');
    const verdict = header === undefined || shop.secret === '' ? { valid: false as const, reason: 'no_signature' }
      : await verifyWebhookSignature(this.deps.secrets.open(shop.secret, shopPlace(shop.id)), header, raw, { now: this.deps.now() });
    if (!verdict.valid) {
      throw new ApiError('SHOP_SIGNATURE_INVALID', 'the Stripe-Signature header does not verify with this shop\'s signing secret',
        { reason: verdict.reason });
    }
    let event: Json;
    try {
      event = obj(JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(raw)));
    } catch {
      throw new ApiError('MALFORMED_JSON', 'the body is not valid JSON');
    }
    const eventId = str(event['id']);
    const object = obj(obj(event['data'])['object']);
    if (eventId === undefined || eventId.length > 200) throw new ApiError('VALIDATION_FAILED', 'the event has no id');
    const actor = { accountId: shop.sellerId };
    const ignored: ShopOutcome = { received: true, action: 'ignored', licenseIds: [] };
    switch (event['type']) {
      case 'checkout.session.completed': {
        if (object['payment_status'] !== 'paid' && object['payment_status'] !== 'no_payment_required') return ignored;
        const masterId = this.mappedMaster(shop, object);
        const email = str(obj(object['customer_details'])['email']) ?? str(object['customer_email']);
        if (masterId === undefined || email === undefined) return ignored;
        const ref = (str(object['payment_intent']) ?? str(object['id']) ?? eventId).slice(0, 200);
        const made = await this.deps.sales.create(actor, masterId, { email, externalRef: ref }, `stripe:${eventId}`);
        return { received: true, action: made.replayed ? 'license_replayed' : 'license_created', licenseIds: [made.license.licenseId] };
      }
      case 'charge.refunded':
      case 'charge.dispute.created': {
        const ref = str(object['payment_intent']);
        if (ref === undefined) return ignored;
        return this.refund(shop, ref, `Stripe ${String(event['type'])} ${eventId}`);
      }
      default:
        return ignored;
    }
  }

  /** Handles one Gumroad sale ping (form-encoded) on the shop's secret URL. */
  async gumroadPing(shopId: string, token: string, form: URLSearchParams): Promise<ShopOutcome> {
    const shop = await this.deps.repo.shops.findShop(shopId);
    const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest();
    if (shop?.kind !== 'gumroad' || !timingSafeEqual(digest(this.deps.secrets.open(shop.secret, shopPlace(shop.id))), digest(token))) {
      throw new ApiError('SHOP_NOT_FOUND', 'no such shop');
    }
    const saleId = str(form.get('sale_id'));
    if (saleId === undefined || saleId.length > 200) throw new ApiError('VALIDATION_FAILED', 'the ping has no sale_id');
    if (form.get('refunded') === 'true' || form.get('disputed') === 'true') {
      return this.refund(shop, saleId, `Gumroad ${form.get('refunded') === 'true' ? 'refund' : 'dispute'} of sale ${saleId}`);
    }
    const key = [str(form.get('product_id')), str(form.get('product_permalink')), str(form.get('permalink'))]
      .find((k) => k !== undefined && Object.hasOwn(shop.products, k));
    const email = str(form.get('email'));
    if (key === undefined || email === undefined) return { received: true, action: 'ignored', licenseIds: [] };
    const made = await this.deps.sales.create({ accountId: shop.sellerId }, shop.products[key] as string,
      { email, externalRef: saleId }, `gumroad:${saleId}`);
    return { received: true, action: made.replayed ? 'license_replayed' : 'license_created', licenseIds: [made.license.licenseId] };
  }

  /** Applies the shop's `onRefund` to the licenses whose reference is `ref`. */
  private async refund(shop: ShopConnection, ref: string, reason: string): Promise<ShopOutcome> {
    if (shop.onRefund === 'none') return { received: true, action: 'ignored', licenseIds: [] };
    const actor = { accountId: shop.sellerId };
    const licenses = await this.deps.repo.queryLicenses({ sellerId: shop.sellerId, externalRef: ref, now: this.deps.now(), limit: 50 });
    for (const l of licenses) {
      if (shop.onRefund === 'revoke') await this.deps.sales.revoke(actor, l.id, reason);
      else if (l.revokedAt === undefined) await this.deps.sales.setSuspended(actor, l.id, true, reason);
    }
    return { received: true, action: 'licenses_changed', licenseIds: licenses.map((l) => l.id) };
  }

  /** The master of the session: by `metadata.iki_product`, else by a line item's price or product id. */
  private mappedMaster(shop: ShopConnection, session: Json): string | undefined {
    const keys: string[] = [];
    const tagged = str(obj(session['metadata'])['iki_product']);
    if (tagged !== undefined) keys.push(tagged);
    const items = obj(session['line_items'])['data'];
    if (Array.isArray(items)) {
      for (const item of items) {
        const price = obj(obj(item)['price']);
        for (const k of [str(price['id']), str(price['product'])]) if (k !== undefined) keys.push(k);
      }
    }
    for (const k of keys) if (Object.hasOwn(shop.products, k)) return shop.products[k];
    return undefined;
  }
}
