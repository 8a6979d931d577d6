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
  ApiProblem, WorkerClient, currentSession, onSessionChange, startModuleWorker,
  type AssetInfo, type LockedResult, type OpenResult, type Verdict, type ProjectTaskProgress, type ProjectTasks, type SaveResult,
  type DigestWorkerOption,
} from '@iki/core/browser';
import { WASM_URL, workerUrl } from '../views/assets.js';
import { errorWords } from '../i18n/errors.js';
import { formatSize, type MessageKey, t } from '../i18n/index.js';
import { busy, byId, el, field, renderSessionBar, showNotice, showPending, showProblem } from '../views/dom.js';
import { AssetList } from '../views/asset-list.js';
import { renderKeyPanel } from '../views/key-panel.js';
import { assetsView, metaView, previewCanvas, snapshotView, verdictView } from '../views/project-view.js';

const APP = 'iki project page 1';
const worker = new WorkerClient<ProjectTasks>(startModuleWorker(workerUrl('project'), 'iki-project'), { wasmUrl: WASM_URL });
let current: OpenResult | undefined;

/** What the worker needs to act for the signed-in account, if any. */
function sessionArgs(): { accessToken?: string; accountId?: string; email?: string } {
  const s = currentSession();
  return s === null ? {} : { accessToken: s.token, accountId: s.accountId, ...(s.email === undefined ? {} : { email: s.email }) };
}

/** Redraws the key panel for whoever uses the page now. */
const keyPanel = (): Promise<void> => renderKeyPanel({ worker, sessionArgs });

/** An error in plain words (a project refusal names what would open the file). */
function problem(target: Element, err: unknown): void {
  if (err instanceof ApiProblem) {
    showProblem(target, err);
    return;
  }
  const e = err as { code?: string; message?: string };
  target.replaceChildren(el('div', { class: 'notice error', role: 'alert', 'data-code': e.code ?? 'ERROR' },
    el('p', {}, errorWords(err)), e.code === undefined ? null : el('p', { class: 'meta' }, t('common.codeLine', { code: e.code }))));
}

function dropZone(zone: HTMLElement, onFiles: (files: File[]) => void): void {
  for (const type of ['dragenter', 'dragover'] as const) zone.addEventListener(type, (e) => { e.preventDefault(); zone.classList.add('over'); });
  // Leaving for one of the zone's own children is not leaving it.
  zone.addEventListener('dragleave', (e) => {
    if (!(e.relatedTarget instanceof Node && zone.contains(e.relatedTarget))) zone.classList.remove('over');
  });
  zone.addEventListener('drop', (e) => {
    e.preventDefault();
    zone.classList.remove('over');
    onFiles([...(e.dataTransfer?.files ?? [])]);
  });
}


const PHASES: Readonly<Record<string, MessageKey>> = {
  hashing: 'project.phase.hashing', 'deriving-key': 'project.phase.derivingKey',
  writing: 'project.phase.writing', verifying: 'project.phase.verifying',
};

/** A status line with a progress bar, for `run`'s progress updates. */
function progressIn(target: Element, first: string): (p: ProjectTaskProgress) => void {
  const words = el('span', {}, first);
  const bar = el('progress', { 'aria-label': t('project.progress') });
  target.replaceChildren(el('div', { class: 'notice info pending', role: 'status', 'aria-busy': 'true' }, words, ' ', bar));
  return (p) => {
    const phase = PHASES[p.phase];
    if (phase !== undefined) words.textContent = t(phase);
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
  const email = result.signedAs === 'account' ? currentSession()?.email : undefined;
  showNotice(target, t('project.saved', { size: formatSize(result.bytes), signer: result.signedAs, email: email ?? 'none',
    encrypted: result.encrypted ? 'yes' : 'no' }), 'success');
  const notice = target.firstElementChild;
  if (notice !== null) {
    notice.setAttribute('data-signed-as', result.signedAs);
    notice.setAttribute('data-digest-worker', String(result.digestWorker));
  }
  if (result.rotated === true) {
    target.append(el('p', { class: 'meta', 'data-rotated': 'true' }, t('project.rotated')));
  }
  if (result.registrationProblem !== undefined) {
    const { code } = result.registrationProblem;
    target.append(el('p', {}, `${t('project.notRegistered')} ${errorWords(result.registrationProblem)}`),
      el('p', { class: 'meta' }, t('common.codeLine', { code })));
  }
}

/** Runs a save task with progress, to a picked file or a download. */
async function runSave(name: string, target: HTMLElement,
  task: (extra: { output?: FileSystemFileHandle; digest: DigestWorkerOption; onProgress: (p: ProjectTaskProgress) => void }) => Promise<SaveResult>): Promise<void> {
  let output: FileSystemFileHandle | undefined;
  try {
    output = await saveTarget(name);
  } catch (err) {
    if ((err as Error).name === 'AbortError') return;
  }
  const onProgress = progressIn(target, t('project.saving'));
  // The file's digest for its signature is hashed by a second worker while the project
  // worker writes (digest-worker.ts).
  const digest = { workerUrl: workerUrl('digest'), wasmUrl: WASM_URL };
  const result = await task({ ...(output === undefined ? {} : { output }), digest, onProgress });
  if (output === undefined && result.blob !== undefined) download(result.blob, name);
  savedNotice(target, result);
  void keyPanel();
}

async function saveNew(event: SubmitEvent): Promise<void> {
  event.preventDefault();
  const form = event.currentTarget as HTMLFormElement;
  const result = byId('save-result');
  const name = field(form, 'name').value.trim() || 'Untitled';
  const canvas = { width: Number(field(form, 'width').value), height: Number(field(form, 'height').value) };
  if (![canvas.width, canvas.height].every((v) => Number.isSafeInteger(v) && v > 0)) {
    showNotice(result, t('project.canvasNeeded'), 'error');
    return;
  }
  const password = byId<HTMLInputElement>('protect-password').checked ? field(form, 'password').value : undefined;
  if (password !== undefined && password.length < 1) {
    showNotice(result, t('project.passwordNeeded'), 'error');
    return;
  }
  const forAccount = byId<HTMLInputElement>('protect-account').checked;
  if (forAccount && currentSession() === null) {
    showNotice(result, t('project.signInToProtect'), 'error');
    return;
  }
  const notes = byId<HTMLTextAreaElement>('project-notes').value;
  const picked = assetList.items;
  const snapshot = { name, canvas, notes, layers: picked.map((a, i) => ({ id: `layer-${i}`, asset: a.name })) };
  const base = { ...sessionArgs(), app: APP, ...(password === undefined ? {} : { password }), forAccount };
  await busy(form, async () => {
    try {
      await runSave(name, result, ({ onProgress, ...extra }) => worker.run('save', {
        ...base, ...extra, snapshot, name, canvas, assets: picked.map((a) => ({ name: a.name, data: a.file, ...(a.file.type === '' ? {} : { type: a.file.type }) })),
      }, { onProgress }));
    } catch (err) {
      problem(result, err);
    }
  });
}

/** A form asking for the password of a file (again after a wrong one); submitting opens it. */
function passwordForm(file: File): { form: HTMLFormElement; input: HTMLInputElement } {
  const input = el('input', { type: 'password', name: 'password', id: 'open-password', autocomplete: 'current-password', 'aria-label': t('project.passwordOfFile') });
  const form = el('form', { class: 'inline', id: 'password-form', onsubmit: (e: SubmitEvent) => {
    e.preventDefault();
    void openFile(file, input.value);
  } }, el('div', {}, el('label', { for: 'open-password' }, t('project.passwordProtected')), input),
  el('button', { type: 'submit' }, t('project.openButton')));
  return { form, input };
}

/**
 * A file whose key was refused: who signed it comes first (SPEC "What the service does" 7),
 * then the password form, or why it does not open here, in a sentence; the code and the account
 * id stay in a details line.
 */
function showLocked(file: File, locked: LockedResult): void {
  const status = byId('open-status');
  const verdict = verdictView(locked.verdict, ownEmail(locked.verdict));
  const { code, details } = locked.refusal;
  if (code === 'PASSWORD_REQUIRED' || code === 'WRONG_PASSWORD') {
    const { form, input } = passwordForm(file);
    status.replaceChildren(verdict, code === 'WRONG_PASSWORD' ? el('div', { class: 'notice error', role: 'alert', 'data-code': 'WRONG_PASSWORD' },
      t('project.wrongPassword')) : '', form);
    input.focus();
    return;
  }
  const email = locked.knownAccount?.email;
  const words = code === 'SIGN_IN_REQUIRED'
    ? (locked.knownAccount === undefined ? t('project.forAccountSignIn') : t('project.forYourAccountSignIn', { email: email ?? '' }))
    : locked.knownAccount === undefined ? t('project.forAnotherAccount') : t('project.forYourOtherAccount', { email: email ?? '' });
  const account = details?.['accountId'];
  status.replaceChildren(verdict, el('div', { class: 'notice error', role: 'alert', 'data-code': code },
    el('p', {}, words), el('p', { class: 'meta' }, typeof account === 'string' ? t('project.forAccountDetails', { code, account })
      : t('common.codeLine', { code }))));
}

/** The signed-in account's e-mail when the verdict names that account. */
function ownEmail(verdict: Verdict): string | undefined {
  const s = currentSession();
  return s !== null && verdict.kind === 'account' && verdict.accountId === s.accountId ? s.email : undefined;
}

async function openFile(file: File, password?: string): Promise<void> {
  const status = byId('open-status');
  const target = byId('opened');
  if (current !== undefined) await worker.run('close', { id: current.id }).catch(() => undefined);
  current = undefined;
  target.replaceChildren();
  const onProgress = progressIn(status, t('project.checking', { name: file.name }));
  try {
    const opened = await worker.run('open', { ...sessionArgs(), file, fileName: file.name, ...(password === undefined ? {} : { password }) },
      { onProgress });
    if ('locked' in opened) {
      showLocked(file, opened);
      return;
    }
    current = opened;
    status.replaceChildren();
    showOpened(opened);
  } catch (err) {
    problem(status, err);
  }
}

/** The verdict first; the content after it, or after the user acknowledged a modified file. */
function showOpened(opened: OpenResult): void {
  const target = byId('opened');
  // Damaged entries by the names the project gives them, not their `assets/<sha256>` paths.
  const names = new Map(opened.assets.map((a) => [a.path, a.name]));
  const verdict = opened.verdict.kind === 'modified'
    ? { ...opened.verdict, damaged: opened.verdict.damaged.map((path) => names.get(path) ?? path) } : opened.verdict;
  target.replaceChildren(verdictView(verdict, ownEmail(verdict)));
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
  } }, t('project.acknowledge'));
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
  } }, t('project.saveAgain'));
  byId('opened').append(el('h3', {}, t('project.project')), metaView(opened), el('h3', {}, t('project.assets')), assetsView(opened.assets, showPreview),
    el('h3', {}, t('project.document')), snapshotView(snapshot), el('p', { class: 'actions' }, saveAgain), saveResult);
}

function showPreview(asset: AssetInfo, cell: HTMLElement): void {
  if (current === undefined) return;
  showPending(cell, t('project.decoding'));
  worker.run('preview', { id: current.id, name: asset.name, maxSide: 160 }).then((preview) => {
    cell.replaceChildren(preview === null ? el('span', { class: 'meta' }, t('project.noPreview', { type: asset.type }))
      : previewCanvas(preview, asset.name));
  }, (err: unknown) => problem(cell, err));
}

renderSessionBar();
const assetList = new AssetList(byId('asset-list'));
void keyPanel();
onSessionChange(() => void keyPanel());
byId<HTMLFormElement>('new-project').addEventListener('submit', (e) => void saveNew(e));
byId<HTMLInputElement>('protect-password').addEventListener('change', (e) => {
  byId('save-password').hidden = !(e.currentTarget as HTMLInputElement).checked;
});
/**
 * Adds picked files to the list and has the worker hash them now, while the user goes on
 * (issue 28 item 4): the save then reads each asset once. Nothing is shown for it; a file
 * that cannot be read is reported by the save.
 */
function pickAssets(files: Iterable<File>): void {
  const list = [...files];
  assetList.add(list);
  if (list.length > 0) void worker.run('rememberAssets', { files: list }).catch(() => undefined);
}
byId<HTMLInputElement>('asset-files').addEventListener('change', (e) => {
  const input = e.currentTarget as HTMLInputElement;
  pickAssets(input.files ?? []);
  // Cleared, so choosing the same file again is a change too.
  input.value = '';
});
dropZone(byId('asset-drop'), (files) => pickAssets(files));
byId<HTMLInputElement>('open-file').addEventListener('change', (e) => {
  const input = e.currentTarget as HTMLInputElement;
  const file = input.files?.[0];
  // Cleared, so choosing the same file again opens it again.
  input.value = '';
  if (file !== undefined) void openFile(file);
});
dropZone(byId('open-drop'), (files) => { if (files[0] !== undefined) void openFile(files[0]); });
window.addEventListener('pagehide', () => worker.terminate());
