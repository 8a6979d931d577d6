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
import { formatBytes, sessionApi, type Master } from '@iki/core/browser';
import { ask } from './confirm.js';
import { busy, el, field, plural, showNotice, showProblem, timeEl } from './dom.js';
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
    el('div', {}, el('label', { for: id }, 'Name'),
      el('input', { id, name: 'name', type: 'text', value: master.name, required: true, autocomplete: 'off' })),
    el('button', { type: 'submit', class: 'secondary' }, 'Rename'));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const name = field(form, 'name').value.trim();
    if (name === '') return showNotice(status, 'Enter a name.', 'error');
    if (new TextEncoder().encode(name).length > MAX_NAME_BYTES) {
      return showNotice(status, `A name can be at most ${MAX_NAME_BYTES} bytes long.`, 'error');
    }
    if (name === master.name) return showNotice(status, 'That is its name already.', 'info');
    void busy(form, async () => {
      try {
        await sessionApi.call(`/api/licenses/masters/${master.masterId}`, { method: 'PATCH', json: { name } });
        openMasters.add(master.masterId);
        await reload();
      } catch (err) {
        showProblem(status, err, 'The master was not renamed.');
      }
    });
  });
  return form;
}

/** The delete button with why it is unavailable; `update` follows the license count. */
function deleteControl(master: Master, status: HTMLElement, reload: () => Promise<void>): { node: HTMLElement; update(n: number): void } {
  const button = el('button', {
    type: 'button', class: 'danger', 'aria-label': `Delete master ${master.name}`,
    onclick: async () => {
      const yes = await ask({
        title: 'Delete this master?', confirm: 'Delete master', danger: true,
        body: el('p', {}, `“${master.name}” (${formatBytes(master.size)}) and its stored file are deleted for good. `
          + 'It has no licenses, so no buyer loses anything.'),
      });
      if (!yes) return;
      button.disabled = true;
      try {
        await sessionApi.call(`/api/licenses/masters/${master.masterId}`, { method: 'DELETE' });
        openMasters.delete(master.masterId);
        await reload();
      } catch (err) {
        button.disabled = false;
        showProblem(status, err, 'The master was not deleted.');
      }
    },
  }, 'Delete');
  const why = el('span', { class: 'meta' });
  const update = (licenses: number) => {
    button.disabled = licenses > 0;
    why.textContent = licenses === 0 ? ''
      : `Kept while it has licenses (${licenses}, revoked ones count): buyers' copies and history need it. `
        + (master.archivedAt === null || master.archivedAt === undefined ? 'Archive it to retire it.' : 'It is archived.');
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
        showProblem(status, err, archived ? 'The master was not restored.' : 'The master was not archived.');
      }
    },
  }, archived ? 'Restore' : 'Archive');
  return button;
}

function masterItem(master: Master, twins: Master[], reload: () => Promise<void>): HTMLDetailsElement {
  const body = el('div', { class: 'body' });
  const count = el('span', { class: 'meta' }, plural(master.licenseCount ?? 0, 'license'));
  const twin = twins[0];
  const details = el('details', { class: 'master', dataset: { masterId: master.masterId } },
    el('summary', {},
      el('strong', {}, master.name),
      el('span', { class: 'meta' }, `${plural(master.textures, 'texture')} · ${plural(master.entries, 'file')} · ${formatBytes(master.size)}`),
      count,
      el('span', { class: 'meta' }, 'uploaded ', timeEl(master.createdAt)),
      twin === undefined ? null : el('span', { class: 'badge duplicate' }, `same file as “${twin.name}”`),
      master.archivedAt === null || master.archivedAt === undefined ? null
        : el('span', { class: 'badge archived' }, 'archived ', timeEl(master.archivedAt))),
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
      count.textContent = plural(n, 'license');
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
      target.replaceChildren(el('p', { class: 'meta' }, 'No masters yet. Upload one with the form.'));
      return;
    }
    const item = (m: Master) => masterItem(m, masters.filter((o) => o.sha256 === m.sha256 && o.masterId !== m.masterId), reload);
    const isArchived = (m: Master) => m.archivedAt !== null && m.archivedAt !== undefined;
    const archived = masters.filter(isArchived);
    const active = masters.filter((m) => !isArchived(m));
    const shelf = archived.length === 0 ? [] : [el('details', { class: 'archived-masters', id: 'archived-masters', open: archived.some((m) => openMasters.has(m.masterId)) },
        el('summary', {}, `Archived masters (${archived.length}): no new licenses; their licenses go on`), ...archived.map(item))];
    target.replaceChildren(
      ...(active.length === 0 ? [el('p', { class: 'meta' }, 'Every master is archived. Restore one to license it again.')] : active.map(item)),
      ...shelf);
  } catch (err) {
    showProblem(target, err);
  }
}
