/**
 * `/seller`, a master's "Activity" (issue 29 item 2): its licenses as small multiples, one
 * sparkline of key releases each, busiest first, with their totals in a table; each opens
 * the license's timeline (seller-activity-timeline.ts) under them. A flag's "Show the
 * timeline" link (seller-activity-flags.ts) is `#activity=<masterId>/<licenseId>`: it opens
 * the master's panel and that license's timeline, from this page or from anywhere else.
 */
import type { Master } from '@iki/core/browser';
import { formatNumber, t, type MessageKey } from '../i18n/index.js';
import { dataTable, el, showPending, showProblem } from './dom.js';
import { masterActivity, type LicenseActivityRow, type MasterActivity, type Period } from './seller-activity-api.js';
import { bucketLabel, sparkline } from './seller-activity-chart.js';
import { licenseTimeline, periodSelect } from './seller-activity-timeline.js';

/** The open activity sections by master id: how a link reaches a timeline. */
const sections = new Map<string, (licenseId: string) => void>();
/** Timelines asked for by a link before their master's panel was built. */
const pending = new Map<string, string>();

function licenseName(row: LicenseActivityRow): string {
  return row.label ?? t('activity.noLabel', { license: row.licenseId });
}

/** The table behind one sparkline, made when it is first opened. */
function sparkNumbers(activity: MasterActivity, row: LicenseActivityRow): HTMLDetailsElement {
  // Two columns fit a card at any width: a plain table, not one that stacks on narrow screens.
  return lazyDetails('numbers', t('activity.numbers'), () => el('table', { class: 'spark-table' },
    el('caption', { class: 'meta' }, t('activity.bucketsCaption', { bucket: activity.bucket, tz: activity.timeZone })),
    el('thead', {}, el('tr', {}, el('th', { scope: 'col' }, t('activity.col.start')), el('th', { scope: 'col', class: 'num' }, t('activity.col.releases')))),
    el('tbody', {}, activity.buckets.map((start, i) => el('tr', { dataset: { start } },
      el('td', {}, el('time', { datetime: start }, bucketLabel(start, activity.bucket))), el('td', { class: 'num' }, formatNumber(row.releases[i] ?? 0)))))));
}

function card(activity: MasterActivity, row: LicenseActivityRow, show: (licenseId: string) => void): HTMLLIElement {
  const name = licenseName(row);
  return el('li', { class: 'spark-card', dataset: { licenseId: row.licenseId } },
    el('div', { class: 'spark-head' },
      el('strong', { class: 'spark-name' }, name),
      el('span', { class: `badge ${row.state === 'active' ? 'active' : row.state === 'suspended' ? 'suspended' : 'revoked'}` },
        t(`activity.state.${row.state}` as MessageKey)),
      row.openFlags > 0 ? el('span', { class: 'badge flagged' }, t('activity.openFlags', { n: row.openFlags })) : null),
    el('div', { class: 'meta' }, t('activity.releasesTotal', { n: row.totals.releases })),
    row.label === null ? null : el('div', { class: 'meta mono' }, row.licenseId),
    sparkline(activity.buckets, row.releases, t('activity.sparkLabel', { license: row.licenseId })),
    el('div', { class: 'spark-foot' },
      el('button', { type: 'button', class: 'secondary small', 'aria-label': t('activity.timelineLabel', { license: row.licenseId }),
        onclick: () => show(row.licenseId) }, t('activity.timeline')),
      sparkNumbers(activity, row)));
}

/** A <details> whose content is made when it is first opened (the panel holds 50 licenses' tables otherwise). */
function lazyDetails(className: string, summary: string, make: () => Node): HTMLDetailsElement {
  const details = el('details', { class: className }, el('summary', {}, summary));
  details.addEventListener('toggle', () => {
    if (details.open && details.childElementCount === 1) details.append(make());
  });
  return details;
}

/** The totals of every license, in the order of the small multiples. */
function totalsTable(activity: MasterActivity): HTMLElement {
  const n = (v: number) => formatNumber(v);
  return lazyDetails('numbers totals', t('activity.numbers'), () => dataTable({
    id: `activity-totals-${activity.masterId}`,
    caption: t('activity.totalsCaption'),
    columns: [{ label: t('activity.col.license') }, { label: t('activity.col.state') }, { label: t('activity.col.releases'), num: true },
      { label: t('activity.col.downloads'), num: true }, { label: t('activity.col.resumes'), num: true }, { label: t('activity.col.refusals'), num: true },
      { label: t('activity.col.addresses'), num: true }, { label: t('activity.col.devices'), num: true }, { label: t('activity.col.flags'), num: true }],
    rows: activity.licenses.map((r) => ({ dataset: { totalsOf: r.licenseId }, cells: [
      [el('div', {}, licenseName(r)), el('code', {}, r.licenseId)], t(`activity.state.${r.state}` as MessageKey),
      n(r.totals.releases), n(r.totals.downloads), n(r.totals.resumes), n(r.totals.refusals), n(r.totals.addresses), n(r.totals.devices),
      n(r.openFlags)] })),
  }));
}

function drawActivity(target: HTMLElement, activity: MasterActivity, show: (licenseId: string) => void): void {
  if (activity.licenses.length === 0) {
    target.replaceChildren(el('p', { class: 'meta' }, t('activity.none')));
    return;
  }
  const rows = [...activity.licenses].sort((a, b) => b.totals.releases - a.totals.releases);
  target.replaceChildren(
    ...(activity.truncated ? [el('p', { class: 'meta' }, t('activity.truncated', { n: rows.length }))] : []),
    el('ul', { class: 'multiples' }, rows.map((r) => card(activity, r, show))),
    totalsTable({ ...activity, licenses: rows }));
}

/** A master's activity section (added to every master's panel by seller.ts). */
export function activitySection(master: Master): HTMLElement {
  let period: Period = 'month';
  const content = el('div', { class: 'activity-content', 'aria-live': 'polite' });
  const slot = el('div', { class: 'timeline-slot' });
  const show = (licenseId: string) => {
    const timeline = licenseTimeline({ licenseId, period, onClose: () => slot.replaceChildren() });
    slot.replaceChildren(timeline);
    timeline.scrollIntoView({ block: 'start' });
    timeline.querySelector<HTMLElement>('h3')?.focus({ preventScroll: true });
  };
  const load = async () => {
    showPending(content, t('activity.loading'));
    try {
      drawActivity(content, await masterActivity(master.masterId, period), show);
    } catch (err) {
      showProblem(content, err);
    }
  };
  sections.set(master.masterId, show);
  const section = el('section', { class: 'activity', 'aria-labelledby': `activity-title-${master.masterId}`, dataset: { masterId: master.masterId } },
    el('h3', { id: `activity-title-${master.masterId}` }, t('activity.title')),
    el('p', { class: 'meta' }, t('activity.lead')),
    periodSelect(`activity-period-${master.masterId}`, period, (p) => {
      period = p;
      void load();
    }),
    content, slot);
  void load();
  const waiting = pending.get(master.masterId);
  if (waiting !== undefined) {
    pending.delete(master.masterId);
    queueMicrotask(() => show(waiting));
  }
  return section;
}

/** `#activity=<masterId>/<licenseId>`: opens that master's panel and the license's timeline. */
export function followActivityLink(hash = location.hash): void {
  const match = /^#activity=(mst_[0-9a-f]{32})\/([0-9a-f]{16})$/.exec(hash);
  if (match === null) return;
  const [, masterId = '', licenseId = ''] = match;
  const show = sections.get(masterId);
  if (show !== undefined && document.contains(document.querySelector(`section.activity[data-master-id="${masterId}"]`))) {
    show(licenseId);
    return;
  }
  pending.set(masterId, licenseId);
  const details = document.querySelector<HTMLDetailsElement>(`details.master[data-master-id="${masterId}"]`);
  if (details === null) return;
  const shelf = details.parentElement?.closest('details');
  if (shelf !== null && shelf !== undefined) shelf.open = true;
  details.open = true;
}
