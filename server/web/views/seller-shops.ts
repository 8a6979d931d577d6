/**
 * `/seller`, "Shops" (issue 26 item 6 for item 5): connect a Stripe account or a Gumroad store
 * so its sales become licenses. The form maps each Stripe price/product id (or Gumroad product)
 * to one of the seller's masters and chooses what a refund does; a Stripe connection may be
 * given its endpoint signing secret now or later ("Set signing secret"). After connecting, the
 * URL to enter in the shop is shown, with Copy: for Gumroad it holds the connection's secret
 * and is shown only this once. The list shows each connection (kind, products, on refund,
 * whether Stripe's secret is set, the URL to enter) with Delete. Every text is `t('shops.…')`.
 */
import { sessionApi, type Master } from '@iki/core/browser';
import { t } from '../i18n/index.js';
import { ask } from './confirm.js';
import { busy, dataTable, el, showNotice, showProblem } from './dom.js';
import { copyButton } from './seller-service-key.js';

/** A connection as `GET /api/shops` answers it. */
interface Shop {
  shopId: string; kind: 'stripe' | 'gumroad'; endpointPath: string; products: Record<string, string>;
  onRefund: 'suspend' | 'revoke' | 'none'; signingSecretSet: boolean; createdAt: string;
}

/** As the service: products per connection, and the longest product id. */
const MAX_PRODUCTS = 100;
const MAX_PRODUCT_ID = 200;

const fullUrl = (path: string): string => `${location.origin}${path}`;

function productRow(masters: readonly Master[], index: number): HTMLElement {
  return el('div', { class: 'shop-product' },
    el('label', { for: `shop-product-${index}` }, t('shops.productId')),
    el('input', { id: `shop-product-${index}`, name: 'product', type: 'text', maxlength: MAX_PRODUCT_ID, autocomplete: 'off',
      placeholder: t('shops.productPlaceholder') }),
    el('label', { for: `shop-master-${index}` }, t('shops.master')),
    el('select', { id: `shop-master-${index}`, name: 'master' },
      masters.map((m) => el('option', { value: m.masterId }, m.name))));
}

function shopRow(shop: Shop, masters: readonly Master[], status: HTMLElement, secretArea: HTMLElement, reload: () => Promise<void>):
{ cells: HTMLElement[]; dataset: Record<string, string> } {
  const name = (id: string) => masters.find((m) => m.masterId === id)?.name ?? id;
  const remove = async () => {
    if (!(await ask({ title: t('shops.removeTitle'), confirm: t('shops.removeConfirm'), danger: true,
      body: el('p', {}, t('shops.removeBody')) }))) return;
    try {
      await sessionApi.call(`/api/shops/${shop.shopId}`, { method: 'DELETE' });
      showNotice(status, t('shops.removed'), 'success');
      secretArea.replaceChildren();
      await reload();
    } catch (err) {
      showProblem(status, err, t('shops.changeFailed'));
    }
  };
  const secretForm = () => {
    const form = el('form', { id: 'shop-secret-form', class: 'api-key-form', novalidate: true },
      el('div', {}, el('label', { for: 'shop-secret-input' }, t('shops.secretFor', { shop: shop.shopId })),
        el('input', { id: 'shop-secret-input', name: 'secret', type: 'password', autocomplete: 'off', maxlength: 512 })),
      el('button', { type: 'submit' }, t('shops.saveSecret')));
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      const input = form.querySelector<HTMLInputElement>('input[name="secret"]');
      const signingSecret = input?.value.trim() ?? '';
      if (signingSecret === '') return showNotice(status, t('shops.noSecret'), 'error');
      void busy(form, async () => {
        try {
          await sessionApi.call(`/api/shops/${shop.shopId}/signing-secret`, { method: 'POST', json: { signingSecret } });
          secretArea.replaceChildren();
          showNotice(status, t('shops.secretSaved'), 'success');
          await reload();
        } catch (err) {
          showProblem(status, err, t('shops.changeFailed'));
        }
      });
    });
    secretArea.replaceChildren(form);
  };
  const secretState = shop.kind === 'gumroad' ? el('span', { class: 'meta' }, t('shops.inUrl'))
    : shop.signingSecretSet ? el('span', { class: 'badge active' }, t('shops.secretSet'))
      : el('span', { class: 'badge suspended' }, t('shops.secretMissing'));
  return {
    dataset: { shopId: shop.shopId },
    cells: [
      el('span', {}, t(shop.kind === 'stripe' ? 'shops.kindStripe' : 'shops.kindGumroad')),
      el('ul', { class: 'shop-products' }, Object.entries(shop.products).map(([product, master]) =>
        el('li', {}, el('code', {}, product), ' → ', name(master)))),
      el('span', {}, t(`shops.refund.${shop.onRefund}`)),
      secretState,
      el('code', { class: 'webhook-url' }, shop.kind === 'gumroad' ? t('shops.gumroadUrlHidden') : fullUrl(shop.endpointPath)),
      el('div', { class: 'actions' },
        shop.kind === 'stripe' ? el('button', { type: 'button', class: 'small', onclick: secretForm }, t('shops.setSecret')) : '',
        el('button', { type: 'button', class: 'danger small', onclick: () => void remove() }, t('shops.remove'))),
    ],
  };
}

/** The "Shops" card: the connect form, the URL of a connection just made, and the list. */
export function shopsSection(): HTMLElement {
  const status = el('div', { 'aria-live': 'polite' });
  const made = el('div', { class: 'api-key-secret', 'aria-live': 'polite' });
  const list = el('div', { id: 'shop-list' }, el('p', { class: 'meta' }, t('common.loading')));
  const secretArea = el('div', { id: 'shop-secret', 'aria-live': 'polite' });
  const products = el('div', { id: 'shop-products' });
  let masters: Master[] = [];
  const columns = ['shops.col.kind', 'shops.col.products', 'shops.col.onRefund', 'shops.col.secret', 'shops.col.url',
    'shops.col.actions'] as const;
  const reload = async () => {
    try {
      const { shops } = await sessionApi.call<{ shops: Shop[] }>('/api/shops');
      list.replaceChildren(shops.length === 0 ? el('p', { class: 'meta' }, t('shops.none')) : dataTable({
        id: 'shops', columns: columns.map((key, i) => ({ label: t(key), hidden: i === columns.length - 1 })),
        rows: shops.map((s) => shopRow(s, masters, status, secretArea, reload)),
      }));
    } catch (err) {
      showProblem(list, err);
    }
  };
  const kind = el('select', { id: 'shop-kind', name: 'kind' },
    el('option', { value: 'stripe' }, t('shops.kindStripe')), el('option', { value: 'gumroad' }, t('shops.kindGumroad')));
  const secretField = el('div', { id: 'shop-signing-secret-field' },
    el('label', { for: 'shop-signing-secret' }, t('shops.signingSecret')),
    el('input', { id: 'shop-signing-secret', name: 'signingSecret', type: 'password', autocomplete: 'off', maxlength: 512,
      placeholder: 'whsec_…' }),
    el('p', { class: 'meta' }, t('shops.signingSecretHint')));
  kind.addEventListener('change', () => { secretField.hidden = kind.value !== 'stripe'; });
  const addProduct = el('button', { type: 'button', class: 'secondary small', onclick: () => {
    if (products.children.length < MAX_PRODUCTS) products.append(productRow(masters, products.children.length));
  } }, t('shops.addProduct'));
  const form = el('form', { id: 'shop-form', class: 'api-key-form', novalidate: true },
    el('div', {}, el('label', { for: 'shop-kind' }, t('shops.kind')), kind),
    el('fieldset', { class: 'scopes' }, el('legend', {}, t('shops.products')), products, addProduct),
    el('div', {}, el('label', { for: 'shop-on-refund' }, t('shops.onRefund')),
      el('select', { id: 'shop-on-refund', name: 'onRefund' }, (['suspend', 'revoke', 'none'] as const).map((v) =>
        el('option', { value: v }, t(`shops.refund.${v}`))))),
    secretField,
    el('button', { type: 'submit' }, t('shops.connect')));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const map: Record<string, string> = {};
    for (const row of products.querySelectorAll('.shop-product')) {
      const id = row.querySelector<HTMLInputElement>('input[name="product"]')?.value.trim() ?? '';
      const master = row.querySelector<HTMLSelectElement>('select[name="master"]')?.value ?? '';
      if (id !== '' && master !== '') map[id] = master;
    }
    if (Object.keys(map).length === 0) return showNotice(status, t('shops.noProduct'), 'error');
    const onRefund = form.querySelector<HTMLSelectElement>('select[name="onRefund"]')?.value ?? 'suspend';
    const secret = kind.value === 'stripe' ? (form.querySelector<HTMLInputElement>('input[name="signingSecret"]')?.value.trim() ?? '') : '';
    void busy(form, async () => {
      try {
        const shop = await sessionApi.call<Shop>('/api/shops', { method: 'POST',
          json: { kind: kind.value, products: map, onRefund, ...(secret === '' ? {} : { signingSecret: secret }) } });
        form.reset();
        secretField.hidden = false;
        products.replaceChildren(productRow(masters, 0));
        status.replaceChildren();
        const url = fullUrl(shop.endpointPath);
        made.replaceChildren(el('div', { class: 'notice success', role: 'status' },
          el('p', {}, t(shop.kind === 'gumroad' ? 'shops.gumroadLead' : 'shops.stripeLead')),
          el('div', { class: 'command' }, el('pre', {}, el('code', { id: 'shop-endpoint-url' }, url)), copyButton(url, t('shops.copyUrl')))));
        await reload();
      } catch (err) {
        showProblem(status, err, t('shops.createFailed'));
      }
    });
  });
  void (async () => {
    try {
      masters = (await sessionApi.call<{ masters: Master[] }>('/api/licenses/masters')).masters;
    } catch (err) {
      showProblem(status, err);
    }
    products.replaceChildren(productRow(masters, 0));
    await reload();
  })();
  return el('section', { class: 'card api-keys shops', 'aria-labelledby': 'shops-title' },
    el('h2', { id: 'shops-title' }, t('shops.title')), el('p', { class: 'meta' }, t('shops.intro')),
    form, status, made, list, secretArea);
}
