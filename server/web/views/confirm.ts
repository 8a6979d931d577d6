/**
 * A question in a modal <dialog> before a step a person may not mean: deleting a master, a
 * second license for the same buyer, a license for oneself. Built on demand (no markup in the
 * page), focus on the safe answer, Escape cancels.
 */
import { t } from '../i18n/index.js';
import { el, type Child } from './dom.js';

/** What the dialog asks. */
export interface Question {
  title: string;
  body: Child;
  /** Words of the button that goes ahead, e.g. "Delete master". */
  confirm: string;
  /** Words of the button that does nothing (default "Cancel"). */
  cancel?: string;
  /** Marks the confirm button as destructive. */
  danger?: boolean;
}

/** Resolves true when the person chose to go ahead; the dialog is removed either way. */
export function ask(question: Question): Promise<boolean> {
  const go = el('button', { type: 'submit', value: 'confirm', class: question.danger === true ? 'danger' : undefined },
    question.confirm);
  const stop = el('button', { type: 'submit', value: 'cancel', class: 'secondary', autofocus: true }, question.cancel ?? t('common.cancel'));
  const title = el('h2', { id: 'confirm-title' }, question.title);
  const dialog = el('dialog', { class: 'confirm', 'aria-labelledby': 'confirm-title' },
    el('form', { method: 'dialog' }, title, el('div', { class: 'confirm-body' }, question.body),
      el('p', { class: 'actions' }, go, stop)));
  document.body.append(dialog);
  return new Promise((resolve) => {
    dialog.addEventListener('close', () => {
      resolve(dialog.returnValue === 'confirm');
      dialog.remove();
    }, { once: true });
    dialog.showModal();
    stop.focus();
  });
}
