/**
 * `/seller`, "Find licenses" (issue 26 item 2): the seller's licenses across masters, searched by
 * order reference, buyer (e-mail or account id) and state (`GET /api/seller/licenses`), newest
 * first, with "More" for the next page. Its words come
 * from the message catalogs (`seller.search.*`).
 */
import { sessionApi, type License } from '@iki/core/browser';
import { t, type MessageKey } from '../i18n/index.js';
import { stateBadge } from './license-state.js';
import { busy, dataTable, el, field, showNotice, showProblem, timeEl, type Row } from './dom.js';

/** The states to search by. */
const STATES: readonly (readonly [state: string, label: MessageKey])[] = [
  ['active', 'seller.search.state.active'], ['suspended', 'seller.search.state.suspended'],
  ['expired', 'seller.search.state.expired'], ['revoked', 'seller.search.state.revoked'],
];
/** The results' columns. */
const COLUMNS: readonly MessageKey[] = ['seller.search.col.license', 'seller.search.col.model', 'seller.search.col.buyer',
  'seller.search.col.ref', 'seller.search.col.issued', 'seller.search.col.state'];

const PAGE = 50;

function rowOf(l: License): Row {
  return {
    dataset: { licenseId: l.licenseId },
    cells: [el('code', {}, l.licenseId), l.masterName, l.licensee.email ?? l.licensee.accountId,
      l.externalRef ?? '', timeEl(l.issuedAt), stateBadge(l)],
  };
}

/** The "Find licenses" card. */
export function licenseSearchSection(): HTMLElement {
  const results = el('div', { id: 'license-search-results', 'aria-live': 'polite' });
  const stateSelect = el('select', { id: 'search-state', name: 'state' }, el('option', { value: '' }, t('seller.search.anyState')),
    STATES.map(([value, label]) => el('option', { value }, t(label))));
  const form = el('form', { id: 'license-search', class: 'inline license-search', novalidate: true },
    el('div', {}, el('label', { for: 'search-ref' }, t('seller.search.ref')), el('input', { id: 'search-ref', name: 'ref', type: 'text', maxlength: 200, autocomplete: 'off' })),
    el('div', {}, el('label', { for: 'search-buyer' }, t('seller.search.buyer')),
      el('input', { id: 'search-buyer', name: 'buyer', type: 'text', autocomplete: 'off', placeholder: t('seller.search.buyerPlaceholder') })),
    el('div', {}, el('label', { for: 'search-state' }, t('seller.search.state')), stateSelect),
    el('button', { type: 'submit' }, t('seller.search.search')));
  let found: License[] = [];
  const load = async (cursor: string | null) => {
    const query = new URLSearchParams({ limit: String(PAGE) });
    for (const name of ['ref', 'buyer'] as const) if (field(form, name).value.trim() !== '') query.set(name, field(form, name).value.trim());
    if (stateSelect.value !== '') query.set('state', stateSelect.value);
    if (cursor !== null) query.set('cursor', cursor);
    try {
      const page = await sessionApi.call<{ licenses: License[]; nextCursor: string | null }>(`/api/seller/licenses?${query.toString()}`);
      found = cursor === null ? page.licenses : [...found, ...page.licenses];
      if (found.length === 0) return showNotice(results, t('seller.search.none'));
      const more = page.nextCursor === null ? null : el('button', { type: 'button', class: 'secondary small',
        onclick: () => void load(page.nextCursor) }, t('seller.search.more'));
      results.replaceChildren(dataTable({ id: 'license-search-table', columns: COLUMNS.map((key) => ({ label: t(key) })),
        rows: found.map(rowOf) }), more ?? '');
    } catch (err) {
      showProblem(results, err);
    }
  };
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void busy(form, () => load(null));
  });
  return el('section', { class: 'card license-search-card', 'aria-labelledby': 'license-search-title' },
    el('h2', { id: 'license-search-title' }, t('seller.search.title')), form, results);
}
