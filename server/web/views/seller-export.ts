/**
 * The seller page's master export (issue 12 item 1): drop a model folder (or pick it), see
 * what will be packed with the checks `iki pack` makes, then pack, sign with this browser's
 * key (registered with the account on the way), seal to the service and upload, with a
 * progress bar and a cancel button. All of the work runs in the export worker
 * (`@iki/core/browser` master-export.ts); this module only reads the folder's file list and
 * draws.
 */
import {
  WorkerClient, currentSession, startModuleWorker,
  type ExportPreview, type ExportProgress, type ExportTasks, type FolderFile,
} from '@iki/core/browser';
import { errorWords } from '../i18n/errors.js';
import { WASM_URL, workerUrl } from './assets.js';
import { formatSize, hasMessage, type MessageKey, t, tParts } from '../i18n/index.js';
import { dataTable, el, pathEl, showNotice } from './dom.js';

const PHASE_WORDS: Readonly<Record<ExportProgress['phase'], MessageKey>> = {
  checking: 'seller.export.phase.checking',
  'signing-key': 'seller.export.phase.signingKey',
  packing: 'seller.export.phase.packing',
  uploading: 'seller.export.phase.uploading',
  'checking-upload': 'seller.export.phase.checkingUpload',
};

let worker: WorkerClient<ExportTasks> | null = null;

function exportWorker(): WorkerClient<ExportTasks> {
  worker ??= new WorkerClient<ExportTasks>(startModuleWorker(workerUrl('export'), 'iki-export'), { wasmUrl: WASM_URL });
  return worker;
}

/** Every file below a dropped directory entry, with paths relative to it. */
async function walkEntry(entry: FileSystemEntry, prefix: string, out: FolderFile[]): Promise<void> {
  if (entry.isFile) {
    const file = await new Promise<File>((resolve, reject) => (entry as FileSystemFileEntry).file(resolve, reject));
    out.push({ path: `${prefix}${entry.name}`, file });
    return;
  }
  if (!entry.isDirectory) return;
  const reader = (entry as FileSystemDirectoryEntry).createReader();
  for (;;) {
    // readEntries answers in batches until an empty one.
    const batch = await new Promise<FileSystemEntry[]>((resolve, reject) => reader.readEntries(resolve, reject));
    if (batch.length === 0) break;
    for (const child of batch) await walkEntry(child, `${prefix}${entry.name}/`, out);
  }
}

/** The files of a drop: one folder's contents (its name removed), or loose files at the top. */
async function droppedFiles(data: DataTransfer): Promise<FolderFile[]> {
  const entries = [...data.items].map((item) => item.webkitGetAsEntry()).filter((e): e is FileSystemEntry => e !== null);
  const out: FolderFile[] = [];
  const only = entries.length === 1 ? entries[0] : undefined;
  if (only?.isDirectory === true) {
    const inside: FolderFile[] = [];
    await walkEntry(only, '', inside);
    for (const f of inside) out.push({ path: f.path.slice(only.name.length + 1), file: f.file });
    return out;
  }
  for (const entry of entries) await walkEntry(entry, '', out);
  // No entries API for this drop (or loose files): the files themselves, at the top.
  if (entries.length === 0) for (const file of data.files) out.push({ path: file.name, file });
  return out;
}

/** The files of a directory pick (`webkitRelativePath` = `<folder>/<path>`). */
function pickedFiles(list: FileList): FolderFile[] {
  return [...list].map((file) => ({ path: file.webkitRelativePath.split('/').slice(1).join('/') || file.name, file }));
}

function previewView(preview: ExportPreview): HTMLElement {
  const notes: HTMLElement[] = [];
  for (const p of preview.problems) {
    // A code the catalogs know in the page's language; else the library's sentence after its code.
    notes.push(el('li', { class: 'error', dataset: { code: p.code } }, hasMessage(`error.${p.code}`) ? errorWords(p) : `${p.code}: ${p.message}`));
  }
  if (preview.ignored.length > 0) {
    notes.push(el('li', { class: 'warning', dataset: { code: 'UNREFERENCED' } },
      t('seller.export.ignored', { n: preview.ignored.length, files: preview.ignored.join(', ') })));
  }
  return el('div', { id: 'export-preview' },
    el('p', {}, preview.model3 === null ? t('seller.export.cannotPack')
      : t('seller.export.model', { name: preview.name ?? '', model3: preview.model3, files: t('seller.files', { n: preview.files.length }),
        size: formatSize(preview.decodedBytes) })),
    notes.length === 0 ? null : el('ul', { class: 'notes', id: 'export-notes' }, notes),
    preview.files.length === 0 ? null : dataTable({
      id: 'export-files',
      caption: t('seller.export.caption'),
      columns: [{ label: t('seller.export.col.path') }, { label: t('seller.export.col.role') }, { label: t('seller.export.col.stored') },
        { label: t('seller.export.col.size'), num: true }],
      rows: preview.files.map((f) => ({
        dataset: { path: f.path, role: f.role },
        cells: [pathEl(f.path), f.role,
          f.role === 'texture' ? t('seller.export.pixels', { width: f.width ?? 0, height: f.height ?? 0 }) : f.type, formatSize(f.size)],
      })),
    }));
}

/**
 * The export card. `onAdded(masterId)` runs after the service accepted a master (the page
 * refreshes its list).
 */
export function masterExportSection(onAdded: (masterId: string) => void): HTMLElement {
  let files: FolderFile[] = [];
  let preview: ExportPreview | null = null;
  let controller: AbortController | null = null;
  const status = el('div', { id: 'export-status', 'aria-live': 'polite' });
  const previewBox = el('div', {});
  // The seller names the master before the export (buyers see the name); it starts as the model's own name.
  const nameInput = el('input', { type: 'text', id: 'export-name', maxlength: 256, autocomplete: 'off' });
  const nameField = el('div', { class: 'field', hidden: true }, el('label', { for: 'export-name' }, t('seller.export.name'), ' ',
    el('span', { class: 'hint' }, t('seller.export.nameHint'))), nameInput);
  const exportButton = el('button', { type: 'button', id: 'export-start', disabled: true }, t('seller.export.start'));
  const cancelButton = el('button', { type: 'button', id: 'export-cancel', class: 'secondary', disabled: true }, t('common.cancel'));
  const input = el('input', { type: 'file', id: 'export-folder', multiple: true, webkitdirectory: true, 'aria-label': t('seller.export.pick') });
  const drop = el('div', { class: 'dropzone', id: 'export-drop', tabindex: '0', role: 'button',
    'aria-label': t('seller.export.dropLabel') },
  el('p', {}, ...tParts('seller.export.drop', { file: el('code', {}, '.model3.json'),
    pick: el('label', { for: 'export-folder', class: 'link' }, t('seller.export.pickIt')) })), input);

  const load = async (picked: FolderFile[]) => {
    files = picked;
    preview = null;
    exportButton.disabled = true;
    status.replaceChildren();
    previewBox.replaceChildren(el('p', { class: 'meta' }, t('seller.export.checkingFiles', { files: t('seller.files', { n: picked.length }) })));
    try {
      preview = await exportWorker().run('previewModel', { files });
      previewBox.replaceChildren(previewView(preview));
      nameInput.value = preview.name ?? '';
      nameField.hidden = false;
      exportButton.disabled = preview.problems.length > 0;
    } catch (err) {
      previewBox.replaceChildren(el('p', { class: 'notice error' }, errorWords(err)));
    }
  };

  const start = async () => {
    const session = currentSession();
    if (session === null || preview === null) return;
    const name = nameInput.value.trim();
    if (name === '') {
      showNotice(status, t('seller.export.nameFirst'), 'error');
      nameInput.focus();
      return;
    }
    controller = new AbortController();
    const bar = el('progress', { id: 'export-progress', max: '1', value: '0', 'aria-label': t('seller.export.progress') });
    const words = el('span', {}, t('seller.export.starting'));
    status.replaceChildren(el('div', { class: 'status-line', role: 'status' }, words, bar));
    exportButton.disabled = true;
    cancelButton.disabled = false;
    try {
      const result = await exportWorker().run('exportMaster', { files, accessToken: session.token, accountId: session.accountId,
        baseUrl: location.origin, name, deflate: { workerUrl: workerUrl('deflate'), wasmUrl: WASM_URL } }, {
        signal: controller.signal,
        onProgress: (p: ExportProgress) => {
          words.textContent = t(PHASE_WORDS[p.phase]);
          bar.dataset['phase'] = p.phase;
          bar.max = Math.max(p.total, 1);
          bar.value = p.done;
        },
      });
      const master = result.master as { masterId: string; name: string; entries: number; textures: number; size: number };
      showNotice(status, t('seller.export.done', { name: master.name, fingerprint: result.signer.fingerprint.slice(0, 12),
        files: t('seller.files', { n: master.entries }), textures: t('seller.textures', { n: master.textures }), size: formatSize(master.size) }), 'success');
      status.dataset['masterId'] = master.masterId;
      onAdded(master.masterId);
    } catch (err) {
      const cancelled = (err as { name?: string }).name === 'AbortError';
      showNotice(status, cancelled ? t('seller.export.cancelled') : t('seller.export.notAdded', { reason: errorWords(err) }),
        cancelled ? 'info' : 'error');
    } finally {
      controller = null;
      cancelButton.disabled = true;
      exportButton.disabled = preview?.problems.length !== 0;
    }
  };

  input.addEventListener('change', () => {
    if (input.files !== null && input.files.length > 0) void load(pickedFiles(input.files));
  });
  // The whole zone picks (its label and the input itself already do).
  drop.addEventListener('click', (e) => {
    if (!(e.target instanceof HTMLLabelElement) && e.target !== input) input.click();
  });
  drop.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' || e.key === ' ') input.click();
  });
  // Highlighted while something is dragged over it; leaving for one of its own children is not leaving.
  for (const type of ['dragenter', 'dragover'] as const) {
    drop.addEventListener(type, (e) => {
      e.preventDefault();
      drop.classList.add('over');
    });
  }
  drop.addEventListener('dragleave', (e) => {
    if (!(e.relatedTarget instanceof Node && drop.contains(e.relatedTarget))) drop.classList.remove('over');
  });
  drop.addEventListener('drop', (e) => {
    e.preventDefault();
    drop.classList.remove('over');
    if (e.dataTransfer !== null) void droppedFiles(e.dataTransfer).then(load);
  });
  exportButton.addEventListener('click', () => void start());
  cancelButton.addEventListener('click', () => controller?.abort(new DOMException('cancelled', 'AbortError')));

  return el('section', { class: 'card', id: 'export', 'aria-labelledby': 'export-title' },
    el('h2', { id: 'export-title' }, t('seller.export.title')),
    el('p', {}, ...tParts('seller.export.lead', { command: el('code', {}, 'iki pack') })),
    drop, previewBox, nameField, el('p', { class: 'actions' }, exportButton, cancelButton), status);
}
