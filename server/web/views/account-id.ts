/**
 * The account id with a copy button (issue 14 item 3): a seller licenses a buyer by this id,
 * so the buyer must be able to find it and hand it over without retyping 37 characters.
 */
import { t } from '../i18n/index.js';
import { el } from './dom.js';

/** A labelled, selectable account id and a button that copies it. */
export function accountIdBox(accountId: string): HTMLElement {
  const status = el('span', { class: 'meta copy-status', 'aria-live': 'polite' });
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(accountId);
      status.textContent = t('accountId.copied');
    } catch {
      // No clipboard permission (or an insecure origin): select it for Ctrl-C instead.
      const range = document.createRange();
      range.selectNodeContents(code);
      const selection = getSelection();
      selection?.removeAllRanges();
      selection?.addRange(range);
      status.textContent = t('accountId.selected');
    }
  };
  const code = el('code', { id: 'account-id', class: 'account-id' }, accountId);
  return el('p', { class: 'account-id-box' },
    el('span', {}, t('accountId.label')), code, ' ',
    el('button', { type: 'button', class: 'secondary small', id: 'copy-account-id', onclick: () => void copy() }, t('accountId.copy')),
    ' ', status);
}
