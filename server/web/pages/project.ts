/**
 * `/project`: project files in the browser (SPEC "What the service does" 7). A new project
 * (name, canvas, notes, dropped assets) is saved as a signed `.iki` with the browser's own key,
 * registered with the account when signed in; optionally protected by a password and/or the
 * account. Opening a `.iki` or `.rigproj` (picker or drop) shows who signed it before anything
 * else, asks for a password when needed, and shows a modified file only after the warning was
 * acknowledged. The panel of this browser's key shows its fingerprint, whether it is
 * registered, and the account's keys with revoke.
 *
 * All work runs in the project worker (`projectTasks` of `@iki/core/browser`); this page holds
 * only what it shows. Saving uses the File System Access API where the browser has it, else a
 * download of the signed file.
 */
import {
  ApiProblem, WorkerClient, currentSession, formatBytes, plainWords, sessionApi, startModuleWorker,
  type AssetInfo, type KeyInfo, type OpenResult, type ProjectTaskProgress, type ProjectTasks, type SaveResult,
  type SigningKeyView,
} from '@iki/core/browser';
import { WASM_URL, workerUrl } from '../views/assets.js';
import { busy, byId, dataTable, el, field, renderSessionBar, showNotice, showPending, showProblem, timeEl } from '../views/dom.js';
import { assetsView, metaView, previewCanvas, snapshotView, verdictView } from '../views/project-view.js';

const APP = 'iki project page 1';
const worker = new WorkerClient<ProjectTasks>(startModuleWorker(workerUrl('project'), 'iki-project'), { wasmUrl: WASM_URL });
const picked: File[] = [];
let current: OpenResult | undefined;

/** What the worker needs to act for the signed-in account, if any. */
function sessionArgs(): { accessToken?: string; accountId?: string; email?: string } {
  const s = currentSession();
  return s === null ? {} : { accessToken: s.token, accountId: s.accountId, ...(s.email === undefined ? {} : { email: s.email }) };
}

/** An error in plain words (a project refusal names what would open the file). */
function problem(target: Element, err: unknown): void {
  if (err instanceof ApiProblem) {
    showProblem(target, err);
    return;
  }
  const e = err as { code?: string; message?: string };
  target.replaceChildren(el('div', { class: 'notice error', role: 'alert', 'data-code': e.code ?? 'ERROR' },
    el('p', {}, e.message ?? plainWords(err)), e.code === undefined ? null : el('p', { class: 'meta' }, `Code ${e.code}.`)));
}

function dropZone(zone: HTMLElement, onFiles: (files: File[]) => void): void {
  zone.addEventListener('dragover', (e) => { e.preventDefault(); zone.classList.add('over'); });
  zone.addEventListener('dragleave', () => zone.classList.remove('over'));
  zone.addEventListener('drop', (e) => {
    e.preventDefault();
    zone.classList.remove('over');
    onFiles([...(e.dataTransfer?.files ?? [])]);
  });
}

function showAssets(): void {
  byId('asset-list').replaceChildren(picked.length === 0 ? el('p', { class: 'meta' }, 'No assets yet.')
    : el('ul', {}, picked.map((f) => el('li', {}, `${f.name} (${formatBytes(f.size)})`))));
}

const PHASES: Readonly<Record<string, string>> = {
  hashing: 'Reading the assets…', 'deriving-key': 'Deriving the key from the password (Argon2id, 64 MiB)…',
  writing: 'Writing and signing…', verifying: 'Checking every chunk and the signature…',
};

/** A status line with a progress bar, for `run`'s progress updates. */
function progressIn(target: Element, first: string): (p: ProjectTaskProgress) => void {
  const words = el('span', {}, first);
  const bar = el('progress', { 'aria-label': 'Progress' });
  target.replaceChildren(el('div', { class: 'notice info pending', role: 'status', 'aria-busy': 'true' }, words, ' ', bar));
  return (p) => {
    words.textContent = PHASES[p.phase] ?? words.textContent;
    bar.max = Math.max(1, p.total);
    bar.value = p.done;
  };
}

/** Where the file goes: a file the user picks (File System Access API), or a download. */
async function saveTarget(name: string): Promise<FileSystemFileHandle | undefined> {
  const picker = (window as unknown as { showSaveFilePicker?: (o: unknown) => Promise<FileSystemFileHandle> }).showSaveFilePicker;
  if (picker === undefined) return undefined;
  return picker({ suggestedName: `${name}.iki`, types: [{ description: 'iki project', accept: { 'application/x-iki': ['.iki'] } }] });
}

function download(blob: Blob, name: string): void {
  const url = URL.createObjectURL(blob);
  const link = el('a', { href: url, download: `${name}.iki`, hidden: true });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

function savedNotice(target: Element, result: SaveResult): void {
  const who = result.signedAs === 'account' ? `signed as your account ${result.account ?? ''}` : 'signed by this browser\'s key (not registered)';
  showNotice(target, `Saved ${formatBytes(result.bytes)}, ${who}${result.encrypted ? ', encrypted' : ''}.`, 'success');
  if (result.registrationProblem !== undefined) {
    target.append(el('p', { class: 'meta' }, `The key could not be registered with your account: ${result.registrationProblem}`));
  }
}

/** Runs a save task with progress, to a picked file or a download. */
async function runSave(name: string, target: HTMLElement,
  task: (extra: { output?: FileSystemFileHandle; onProgress: (p: ProjectTaskProgress) => void }) => Promise<SaveResult>): Promise<void> {
  let output: FileSystemFileHandle | undefined;
  try {
    output = await saveTarget(name);
  } catch (err) {
    if ((err as Error).name === 'AbortError') return;
  }
  const onProgress = progressIn(target, 'Saving…');
  const result = await task({ ...(output === undefined ? {} : { output }), onProgress });
  if (output === undefined && result.blob !== undefined) download(result.blob, name);
  savedNotice(target, result);
  void renderKeyPanel();
}

async function saveNew(event: SubmitEvent): Promise<void> {
  event.preventDefault();
  const form = event.currentTarget as HTMLFormElement;
  const result = byId('save-result');
  const name = field(form, 'name').value.trim() || 'Untitled';
  const canvas = { width: Number(field(form, 'width').value), height: Number(field(form, 'height').value) };
  if (![canvas.width, canvas.height].every((v) => Number.isSafeInteger(v) && v > 0)) {
    showNotice(result, 'The canvas needs a width and a height in whole pixels.', 'error');
    return;
  }
  const password = byId<HTMLInputElement>('protect-password').checked ? field(form, 'password').value : undefined;
  if (password !== undefined && password.length < 1) {
    showNotice(result, 'Enter the password, or untick "A password".', 'error');
    return;
  }
  const forAccount = byId<HTMLInputElement>('protect-account').checked;
  if (forAccount && currentSession() === null) {
    showNotice(result, 'Sign in to protect the file for your account.', 'error');
    return;
  }
  const notes = byId<HTMLTextAreaElement>('project-notes').value;
  const snapshot = { name, canvas, notes, layers: picked.map((f, i) => ({ id: `layer-${i}`, asset: f.name })) };
  const base = { ...sessionArgs(), app: APP, ...(password === undefined ? {} : { password }), forAccount };
  await busy(form, async () => {
    try {
      await runSave(name, result, ({ onProgress, ...extra }) => worker.run('save', {
        ...base, ...extra, snapshot, name, canvas, assets: picked.map((f) => ({ name: f.name, data: f, ...(f.type === '' ? {} : { type: f.type }) })),
      }, { onProgress }));
    } catch (err) {
      problem(result, err);
    }
  });
}

/** Asks for the password of a file (again after a wrong one), then opens it. */
function askPassword(file: File, wrong: boolean): void {
  const status = byId('open-status');
  const input = el('input', { type: 'password', name: 'password', id: 'open-password', autocomplete: 'current-password', 'aria-label': 'Password of the file' });
  const form = el('form', { class: 'inline', id: 'password-form', onsubmit: (e: SubmitEvent) => {
    e.preventDefault();
    void openFile(file, input.value);
  } }, el('div', {}, el('label', { for: 'open-password' }, 'This file is protected by a password'), input),
  el('button', { type: 'submit' }, 'Open'));
  status.replaceChildren(wrong ? el('div', { class: 'notice error', role: 'alert', 'data-code': 'WRONG_PASSWORD' },
    'That password does not open this file. Try again.') : '', form);
  input.focus();
}

async function openFile(file: File, password?: string): Promise<void> {
  const status = byId('open-status');
  const target = byId('opened');
  if (current !== undefined) await worker.run('close', { id: current.id }).catch(() => undefined);
  current = undefined;
  target.replaceChildren();
  const onProgress = progressIn(status, `Checking ${file.name}…`);
  try {
    const opened = await worker.run('open', { ...sessionArgs(), file, fileName: file.name, ...(password === undefined ? {} : { password }) },
      { onProgress });
    current = opened;
    status.replaceChildren();
    showOpened(opened);
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === 'PASSWORD_REQUIRED' || code === 'WRONG_PASSWORD') askPassword(file, code === 'WRONG_PASSWORD');
    else problem(status, err);
  }
}

/** The verdict first; the content after it, or after the user acknowledged a modified file. */
function showOpened(opened: OpenResult): void {
  const target = byId('opened');
  target.replaceChildren(verdictView(opened.verdict, currentSession()?.accountId === (opened.verdict as { accountId?: string }).accountId
    ? currentSession()?.email : undefined));
  if (opened.snapshot !== undefined) {
    showContent(opened, opened.snapshot);
    return;
  }
  const button: HTMLButtonElement = el('button', { type: 'button', class: 'danger', id: 'acknowledge', onclick: async () => {
    button.disabled = true;
    try {
      showContent(opened, await worker.run('acknowledge', { id: opened.id }));
      button.remove();
    } catch (err) {
      problem(target, err);
    }
  } }, 'I understand; show the content anyway');
  target.append(button);
}

function showContent(opened: OpenResult, snapshot: Record<string, unknown>): void {
  const saveResult = el('div', { class: 'result', 'aria-live': 'polite' });
  const saveAgain: HTMLButtonElement = el('button', { type: 'button', class: 'secondary', id: 'save-opened', onclick: async () => {
    saveAgain.disabled = true;
    try {
      await runSave(opened.meta.name, saveResult, ({ onProgress, ...extra }) =>
        worker.run('saveOpened', { ...sessionArgs(), ...extra, id: opened.id, app: APP }, { onProgress }));
    } catch (err) {
      problem(saveResult, err);
    } finally {
      saveAgain.disabled = false;
    }
  } }, 'Save as a new project');
  byId('opened').append(el('h3', {}, 'Project'), metaView(opened), el('h3', {}, 'Assets'), assetsView(opened.assets, showPreview),
    el('h3', {}, 'Document'), snapshotView(snapshot), el('p', { class: 'actions' }, saveAgain), saveResult);
}

function showPreview(asset: AssetInfo, cell: HTMLElement): void {
  if (current === undefined) return;
  showPending(cell, 'Decoding…');
  worker.run('preview', { id: current.id, name: asset.name, maxSide: 160 }).then((preview) => {
    cell.replaceChildren(preview === null ? el('span', { class: 'meta' }, `${asset.type}: no preview (only PNG, JPEG and WebP are drawn)`)
      : previewCanvas(preview, asset.name));
  }, (err: unknown) => problem(cell, err));
}

async function renderKeyPanel(): Promise<void> {
  const panel = byId('key-panel');
  let info: KeyInfo;
  try {
    info = await worker.run('keyInfo', {});
  } catch (err) {
    problem(panel, err);
    return;
  }
  const session = currentSession();
  const registered = info.registeredAccount !== undefined && info.registeredAccount === session?.accountId;
  const register = session === null || registered ? null : el('button', { type: 'button', id: 'register-key', onclick: async () => {
    try {
      await worker.run('registerKey', sessionArgs());
      await renderKeyPanel();
    } catch (err) {
      problem(panel, err);
    }
  } }, 'Register with my account');
  panel.replaceChildren(
    el('p', { class: 'fingerprint', id: 'key-fingerprint', 'data-fingerprint': info.fingerprint }, `Fingerprint ${info.fingerprint}`),
    el('p', { id: 'key-status', 'data-registered': String(registered) }, registered ? `Registered with your account ${info.registeredAccount ?? ''}.`
      : info.registeredAccount !== undefined ? `Registered with the account ${info.registeredAccount}.` : 'Not registered with an account.'),
    el('p', { class: 'meta' }, info.kind === 'webcrypto'
      ? 'A WebCrypto Ed25519 key this browser keeps and will not export.'
      : 'Fallback: this browser has no WebCrypto Ed25519, so the key is kept encrypted and used inside WebAssembly (weaker: script on this site could copy it).'),
    register ?? '');
  await renderAccountKeys(info.fingerprint);
}

/** The signed-in account's keys, with revoke. */
async function renderAccountKeys(own: string): Promise<void> {
  const target = byId('account-keys');
  if (currentSession() === null) {
    target.replaceChildren(el('p', { class: 'meta' }, 'Sign in to see your account\'s keys.'));
    return;
  }
  try {
    const { keys } = await sessionApi.call<{ keys: SigningKeyView[] }>('/api/keys/signing');
    target.replaceChildren(el('h3', {}, 'Your account\'s keys'), keys.length === 0 ? el('p', { class: 'meta' }, 'None registered yet.') : dataTable({
      columns: [{ label: 'Key' }, { label: 'Name' }, { label: 'Registered' }, { label: 'Status' }, { label: 'Actions', hidden: true }],
      rows: keys.map((k) => ({ dataset: { key: k.publicKey }, cells: [
        el('span', { class: 'fingerprint' }, `${k.publicKey}${k.publicKey === own ? ' (this browser)' : ''}`), k.name, timeEl(k.createdAt),
        k.status === 'revoked' ? `revoked ${k.revokedAt ?? ''}` : 'active',
        k.status === 'revoked' ? null : el('button', { type: 'button', class: 'danger small', onclick: () => void revoke(k.publicKey) }, 'Revoke'),
      ] })),
    }));
  } catch (err) {
    showProblem(target, err);
  }
}

async function revoke(publicKey: string): Promise<void> {
  const target = byId('account-keys');
  try {
    await sessionApi.call(`/api/keys/signing/${encodeURIComponent(publicKey)}/revoke`, { method: 'POST' });
    await renderKeyPanel();
  } catch (err) {
    showProblem(target, err);
  }
}

renderSessionBar();
showAssets();
void renderKeyPanel();
byId<HTMLFormElement>('new-project').addEventListener('submit', (e) => void saveNew(e));
byId<HTMLInputElement>('protect-password').addEventListener('change', (e) => {
  byId('save-password').hidden = !(e.currentTarget as HTMLInputElement).checked;
});
byId<HTMLInputElement>('asset-files').addEventListener('change', (e) => {
  picked.push(...((e.currentTarget as HTMLInputElement).files ?? []));
  showAssets();
});
dropZone(byId('asset-drop'), (files) => { picked.push(...files); showAssets(); });
byId<HTMLInputElement>('open-file').addEventListener('change', (e) => {
  const file = (e.currentTarget as HTMLInputElement).files?.[0];
  if (file !== undefined) void openFile(file);
});
dropZone(byId('open-drop'), (files) => { if (files[0] !== undefined) void openFile(files[0]); });
window.addEventListener('pagehide', () => worker.terminate());
