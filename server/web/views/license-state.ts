/**
 * A license's state as a badge, shared by the seller's and the buyer's pages (issue 26 item 3:
 * the buyer sees a suspension and the expiry date too): revoked, suspended (since when),
 * expired, or active (until when, if it expires). Every text of this view is in `WORDS`.
 */
import type { License } from '@iki/core/browser';
import { el, timeEl, type Child } from './dom.js';

const WORDS = { revoked: 'revoked', suspended: 'suspended', expired: 'expired', active: 'active', until: 'until ', expiredAt: 'expired ' } as const;

/** The license's state badge, with the time it applies from or until. */
export function stateBadge(license: License): Child {
  if (license.revokedAt !== null) return [el('span', { class: 'badge revoked' }, WORDS.revoked), el('div', { class: 'meta' }, timeEl(license.revokedAt))];
  if (license.state === 'suspended' && license.suspendedAt !== undefined && license.suspendedAt !== null) {
    return [el('span', { class: 'badge suspended' }, WORDS.suspended), el('div', { class: 'meta' }, timeEl(license.suspendedAt))];
  }
  const until = license.expiresAt === undefined || license.expiresAt === null ? null
    : el('div', { class: 'meta' }, license.state === 'expired' ? WORDS.expiredAt : WORDS.until, timeEl(license.expiresAt));
  return [el('span', { class: `badge ${license.state === 'expired' ? 'revoked' : 'active'}` }, license.state === 'expired' ? WORDS.expired : WORDS.active), until];
}
