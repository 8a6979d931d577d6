/**
 * Shop connections (issue 26 item 5), as one part of the `Repository` (`repo.shops`): a
 * seller's Stripe account, its endpoint signing secret, the price/product-to-master map and
 * what a refund or dispute does. `SqlShopRecords` (migration 34) and `MemoryShopRecords`.
 */
import type { SqlDb } from './sql-db.js';

/** What a refund or dispute does to the licenses of its payment. */
export type RefundAction = 'suspend' | 'revoke' | 'none';

/** A connected shop. */
export interface ShopConnection {
  id: string;
  sellerId: string;
  kind: 'stripe' | 'gumroad';
  /** Stripe: the endpoint signing secret; Gumroad: the ping URL's token (never answered again, never logged). */
  secret: string;
  /** Price or product id -> master id. */
  products: Record<string, string>;
  onRefund: RefundAction;
  createdAt: Date;
}

/** The shop records. */
export interface ShopRecords {
  insertShop(shop: ShopConnection): Promise<void>;
  /** A connection by id, whoever's (the shop's route is not signed in). */
  findShop(id: string): Promise<ShopConnection | undefined>;
  listShops(sellerId: string): Promise<ShopConnection[]>;
  deleteShop(id: string, sellerId: string): Promise<boolean>;
  /** Replaces the shop's signing secret; undefined when the seller has no such shop. */
  setShopSecret(id: string, sellerId: string, secret: string): Promise<ShopConnection | undefined>;
}

const COLUMNS = 'id, seller_id, kind, secret, products, on_refund, created_at';

function toShop(r: Record<string, unknown>): ShopConnection {
  const products = r['products'];
  return {
    id: String(r['id']), sellerId: String(r['seller_id']), kind: String(r['kind']) as ShopConnection['kind'], secret: String(r['secret']),
    products: (typeof products === 'string' ? JSON.parse(products) : products) as Record<string, string>,
    onRefund: String(r['on_refund']) as RefundAction,
    createdAt: r['created_at'] instanceof Date ? r['created_at'] : new Date(String(r['created_at'])),
  };
}

/** The shop records in SQL. */
export class SqlShopRecords implements ShopRecords {
  constructor(private readonly db: SqlDb) {}

  async insertShop(s: ShopConnection): Promise<void> {
    await this.db.query(`INSERT INTO shop_connections (${COLUMNS}) VALUES ($1, $2, $3, $4, $5::jsonb, $6, $7)`,
      [s.id, s.sellerId, s.kind, s.secret, JSON.stringify(s.products), s.onRefund, s.createdAt]);
  }

  async findShop(id: string): Promise<ShopConnection | undefined> {
    const { rows } = await this.db.query(`SELECT ${COLUMNS} FROM shop_connections WHERE id = $1`, [id]);
    return rows[0] === undefined ? undefined : toShop(rows[0]);
  }

  async listShops(sellerId: string): Promise<ShopConnection[]> {
    const { rows } = await this.db.query(`SELECT ${COLUMNS} FROM shop_connections WHERE seller_id = $1
      ORDER BY created_at DESC, id`, [sellerId]);
    return rows.map(toShop);
  }

  async setShopSecret(id: string, sellerId: string, secret: string): Promise<ShopConnection | undefined> {
    const { rows } = await this.db.query(`UPDATE shop_connections SET secret = $3 WHERE id = $1 AND seller_id = $2 RETURNING ${COLUMNS}`,
      [id, sellerId, secret]);
    return rows[0] === undefined ? undefined : toShop(rows[0]);
  }

  async deleteShop(id: string, sellerId: string): Promise<boolean> {
    return (await this.db.query('DELETE FROM shop_connections WHERE id = $1 AND seller_id = $2', [id, sellerId])).rowCount === 1;
  }
}

/** The shop records in memory. */
export class MemoryShopRecords implements ShopRecords {
  private readonly shops = new Map<string, ShopConnection>();

  async insertShop(s: ShopConnection): Promise<void> {
    this.shops.set(s.id, structuredClone(s));
  }

  async findShop(id: string): Promise<ShopConnection | undefined> {
    const s = this.shops.get(id);
    return s === undefined ? undefined : structuredClone(s);
  }

  async listShops(sellerId: string): Promise<ShopConnection[]> {
    return [...this.shops.values()].filter((s) => s.sellerId === sellerId)
      .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || a.id.localeCompare(b.id)).map((s) => structuredClone(s));
  }

  async setShopSecret(id: string, sellerId: string, secret: string): Promise<ShopConnection | undefined> {
    const s = this.shops.get(id);
    if (s?.sellerId !== sellerId) return undefined;
    s.secret = secret;
    return structuredClone(s);
  }

  async deleteShop(id: string, sellerId: string): Promise<boolean> {
    if (this.shops.get(id)?.sellerId !== sellerId) return false;
    return this.shops.delete(id);
  }
}
