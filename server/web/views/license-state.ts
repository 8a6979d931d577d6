/**
 * A license's state as a badge, shared by the seller's and the buyer's pages (issue 26 item 3:
 * the buyer sees a suspension and the expiry date too): revoked, suspended (since when),
 * expired, or active (until when, if it expires). Its words come from the message catalogs.
 */
import type { License } from '@iki/core/browser';
import { formatDateTime, t } from '../i18n/index.js';
import { el, timeEl, type Child } from './dom.js';

/** The license's state badge, with the time it applies from or until. */
export function stateBadge(license: License): Child {
  if (license.revokedAt !== null) return [el('span', { class: 'badge revoked' }, t('player.revoked')), el('div', { class: 'meta' }, timeEl(license.revokedAt))];
  if (license.state === 'suspended' && license.suspendedAt !== undefined && license.suspendedAt !== null) {
    return [el('span', { class: 'badge suspended' }, t('licenseState.suspended')), el('div', { class: 'meta' }, timeEl(license.suspendedAt))];
  }
  const until = license.expiresAt === undefined || license.expiresAt === null ? null
    : el('div', { class: 'meta' }, el('time', { datetime: license.expiresAt, title: license.expiresAt },
      t(license.state === 'expired' ? 'licenseState.expiredAt' : 'licenseState.until', { when: formatDateTime(license.expiresAt) })));
  return [el('span', { class: `badge ${license.state === 'expired' ? 'revoked' : 'active'}` },
    license.state === 'expired' ? t('licenseState.expired') : t('player.active')), until];
}
