/**
 * `/seller`, "Your masters": the seller's masters, each a <details> that opens into its panel
 * (views/seller-master.ts) under a row to rename, archive or delete it. Deleting asks first and
 * is offered only while the master has no license (the service refuses it otherwise, revoked
 * licenses included); a licensed master is retired by archiving it (no new licenses, the rest
 * goes on), and archived masters are listed apart. Masters holding the same file (same
 * SHA-256) say so.
 *
 * Other views add a section to every master's panel with {@link addMasterSection}, so the
 * page stays one list of independent views.
 */
import { sessionApi, type Master } from '@iki/core/browser';
import { ask } from './confirm.js';
import { formatSize, t, tParts } from '../i18n/index.js';
import { busy, el, field, showNotice, showProblem, timeEl } from './dom.js';
import { masterPanel } from './seller-master.js';

/** Builds one extra section of a master's panel (called when the panel first opens). */
export type MasterSection = (master: Master) => Node;

const sections: MasterSection[] = [];
/** Masters whose panel is open, kept open across refreshes of the list. */
const openMasters = new Set<string>();

/** Adds a section to every master's panel, after the built-in ones. */
export function addMasterSection(section: MasterSection): void {
  sections.push(section);
}

/** Longest name, as the service counts it (bytes of UTF-8). */
const MAX_NAME_BYTES = 256;

function renameForm(master: Master, status: HTMLElement, reload: () => Promise<void>): HTMLFormElement {
  const id = `name-${master.masterId}`;
  const form = el('form', { class: 'inline rename', novalidate: true },
    el('div', {}, el('label', { for: id }, t('seller.masters.name')),
      el('input', { id, name: 'name', type: 'text', value: master.name, required: true, autocomplete: 'off' })),
    el('button', { type: 'submit', class: 'secondary' }, t('seller.masters.rename')));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const name = field(form, 'name').value.trim();
    if (name === '') return showNotice(status, t('seller.masters.enterName'), 'error');
    if (new TextEncoder().encode(name).length > MAX_NAME_BYTES) {
      return showNotice(status, t('seller.masters.nameTooLong', { max: MAX_NAME_BYTES }), 'error');
    }
    if (name === master.name) return showNotice(status, t('seller.masters.sameName'), 'info');
    void busy(form, async () => {
      try {
        await sessionApi.call(`/api/licenses/masters/${master.masterId}`, { method: 'PATCH', json: { name } });
        openMasters.add(master.masterId);
        await reload();
      } catch (err) {
        showProblem(status, err, t('seller.masters.notRenamed'));
      }
    });
  });
  return form;
}

/** The delete button with why it is unavailable; `update` follows the license count. */
function deleteControl(master: Master, status: HTMLElement, reload: () => Promise<void>): { node: HTMLElement; update(n: number): void } {
  const button = el('button', {
    type: 'button', class: 'danger', 'aria-label': t('seller.masters.deleteLabel', { name: master.name }),
    onclick: async () => {
      const yes = await ask({
        title: t('seller.masters.deleteTitle'), confirm: t('seller.masters.deleteConfirm'), danger: true,
        body: el('p', {}, t('seller.masters.deleteBody', { name: master.name, size: formatSize(master.size) })),
      });
      if (!yes) return;
      button.disabled = true;
      try {
        await sessionApi.call(`/api/licenses/masters/${master.masterId}`, { method: 'DELETE' });
        openMasters.delete(master.masterId);
        await reload();
      } catch (err) {
        button.disabled = false;
        showProblem(status, err, t('seller.masters.notDeleted'));
      }
    },
  }, t('seller.masters.delete'));
  const why = el('span', { class: 'meta' });
  const update = (licenses: number) => {
    button.disabled = licenses > 0;
    why.textContent = licenses === 0 ? ''
      : t('seller.masters.kept', { n: licenses, archived: master.archivedAt === null || master.archivedAt === undefined ? 'no' : 'yes' });
  };
  update(master.licenseCount ?? 0);
  return { node: el('div', { class: 'actions delete' }, button, why), update };
}

/** Archives or restores the master (PATCH archived). */
function archiveButton(master: Master, status: HTMLElement, reload: () => Promise<void>): HTMLButtonElement {
  const archived = master.archivedAt !== null && master.archivedAt !== undefined;
  const button = el('button', {
    type: 'button', class: 'secondary archive',
    onclick: async () => {
      button.disabled = true;
      try {
        await sessionApi.call(`/api/licenses/masters/${master.masterId}`, { method: 'PATCH', json: { archived: !archived } });
        openMasters.add(master.masterId);
        await reload();
      } catch (err) {
        button.disabled = false;
        showProblem(status, err, t(archived ? 'seller.masters.notRestored' : 'seller.masters.notArchived'));
      }
    },
  }, t(archived ? 'seller.masters.restore' : 'seller.masters.archive'));
  return button;
}

function masterItem(master: Master, twins: Master[], reload: () => Promise<void>): HTMLDetailsElement {
  const body = el('div', { class: 'body' });
  const count = el('span', { class: 'meta' }, t('seller.licenseCount', { n: master.licenseCount ?? 0 }));
  const twin = twins[0];
  const details = el('details', { class: 'master', dataset: { masterId: master.masterId } },
    el('summary', {},
      el('strong', {}, master.name),
      el('span', { class: 'meta' }, `${t('seller.textures', { n: master.textures })} · ${t('seller.files', { n: master.entries })} · ${formatSize(master.size)}`),
      count,
      el('span', { class: 'meta' }, ...tParts('seller.masters.uploaded', { when: timeEl(master.createdAt) })),
      twin === undefined ? null : el('span', { class: 'badge duplicate' }, t('seller.masters.sameFile', { name: twin.name })),
      master.archivedAt === null || master.archivedAt === undefined ? null
        : el('span', { class: 'badge archived' }, ...tParts('seller.masters.archivedAt', { when: timeEl(master.archivedAt) }))),
    body);
  let loaded = false;
  details.addEventListener('toggle', () => {
    if (details.open) openMasters.add(master.masterId);
    else openMasters.delete(master.masterId);
    if (!details.open || loaded) return;
    loaded = true;
    const status = el('div', { class: 'result', 'aria-live': 'polite' });
    const panel = el('div');
    const remove = deleteControl(master, status, reload);
    body.replaceChildren(el('div', { class: 'manage' }, renameForm(master, status, reload),
      el('div', { class: 'actions' }, archiveButton(master, status, reload)), remove.node),
      status, panel, ...sections.map((section) => section(master)));
    masterPanel(panel, master, (n) => {
      count.textContent = t('seller.licenseCount', { n });
      remove.update(n);
    }).catch((err: unknown) => showProblem(panel, err));
  });
  if (openMasters.has(master.masterId)) details.open = true;
  return details;
}

/** Draws the seller's masters into `target`; `open` names a master to open. */
export async function loadMasters(target: HTMLElement, open?: string): Promise<void> {
  if (open !== undefined) openMasters.add(open);
  const reload = () => loadMasters(target);
  try {
    const { masters } = await sessionApi.call<{ masters: Master[] }>('/api/licenses/masters');
    if (masters.length === 0) {
      target.replaceChildren(el('p', { class: 'meta' }, t('seller.masters.none')));
      return;
    }
    const item = (m: Master) => masterItem(m, masters.filter((o) => o.sha256 === m.sha256 && o.masterId !== m.masterId), reload);
    const isArchived = (m: Master) => m.archivedAt !== null && m.archivedAt !== undefined;
    const archived = masters.filter(isArchived);
    const active = masters.filter((m) => !isArchived(m));
    const shelf = archived.length === 0 ? [] : [el('details', { class: 'archived-masters', id: 'archived-masters', open: archived.some((m) => openMasters.has(m.masterId)) },
        el('summary', {}, t('seller.masters.archivedShelf', { n: archived.length })), ...archived.map(item))];
    target.replaceChildren(
      ...(active.length === 0 ? [el('p', { class: 'meta' }, t('seller.masters.allArchived'))] : active.map(item)),
      ...shelf);
  } catch (err) {
    showProblem(target, err);
  }
}
