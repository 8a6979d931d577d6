/**
 * `/seller`, "Add a master": the upload form with its progress bar, the service's check, and
 * the outcome right under the form, scrolled into view (the form may sit low on a small
 * screen). An upload of a file the seller already stored (the answer's `duplicateOf`, same
 * SHA-256) is kept but warned about, with a one-click delete of the new copy.
 */
import { ApiProblem, problemFrom, refreshSession, sessionApi, type Master } from '@iki/core/browser';
import { formatSize, t, tParts } from '../i18n/index.js';
import { el, field, showNotice, showProblem, timeEl } from './dom.js';

const MODEL_MEDIA_TYPE = 'application/vnd.iki.model';

/** What the upload view needs from the page. */
export interface UploadHooks {
  /** Redraws the masters list, with `masterId` open when given. */
  refresh(openMasterId?: string): Promise<void>;
}

/** Uploads with XMLHttpRequest, the one browser API that reports upload progress. */
function sendMaster(file: File, onProgress: (done: number, total: number) => void): Promise<Master> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', '/api/licenses/masters');
    for (const [name, value] of Object.entries(sessionApi.authHeaders())) xhr.setRequestHeader(name, value);
    xhr.setRequestHeader('content-type', MODEL_MEDIA_TYPE);
    xhr.setRequestHeader('accept', 'application/json');
    xhr.responseType = 'text';
    xhr.upload.addEventListener('progress', (e) => onProgress(e.loaded, e.lengthComputable ? e.total : file.size));
    xhr.addEventListener('load', () => {
      const headers = new Headers();
      for (const name of ['content-type', 'x-request-id', 'retry-after']) {
        const value = xhr.getResponseHeader(name);
        if (value !== null) headers.set(name, value);
      }
      const response = new Response(xhr.status === 204 ? null : xhr.responseText, { status: xhr.status, headers });
      if (xhr.status >= 200 && xhr.status < 300) response.json().then((m) => resolve(m as Master), reject);
      else {
        problemFrom(response).then((problem) => {
          if (problem.status === 401) void refreshSession();
          reject(problem);
        }, reject);
      }
    });
    xhr.addEventListener('error', () => reject(ApiProblem.network('the upload was interrupted')));
    xhr.send(file);
  });
}

/** Keeps the outcome in view: the form can be below the fold on a short or narrow screen. */
function reveal(status: HTMLElement): void {
  status.scrollIntoView({ block: 'nearest' });
}

/** The warning shown when the uploaded file is one the seller already has. */
function duplicateWarning(master: Master, status: HTMLElement, hooks: UploadHooks): HTMLElement {
  const earlier = master.duplicateOf ?? [];
  const first = earlier[0];
  const remove = el('button', { type: 'button', class: 'danger small', id: 'delete-duplicate' }, t('seller.upload.deleteCopy'));
  const keep = el('button', { type: 'button', class: 'secondary small' }, t('seller.upload.keepBoth'));
  const box = el('div', { class: 'notice warning', role: 'alert', id: 'duplicate-warning' },
    el('p', {}, el('strong', {}, t('seller.upload.twiceLead')), ' ',
      ...tParts('seller.upload.twice', { first: first?.name ?? '', when: first === undefined ? '' : timeEl(first.createdAt),
        others: Math.max(0, earlier.length - 1), times: earlier.length + 1, name: master.name })),
    el('p', { class: 'actions' }, remove, keep));
  remove.addEventListener('click', async () => {
    remove.disabled = true;
    try {
      await sessionApi.call(`/api/licenses/masters/${master.masterId}`, { method: 'DELETE' });
      showNotice(status, t('seller.upload.copyDeleted', { name: master.name }), 'success');
      await hooks.refresh(first?.masterId);
    } catch (err) {
      showProblem(status, err, t('seller.upload.copyNotDeleted'));
    }
  });
  keep.addEventListener('click', () => {
    showNotice(status, t('seller.upload.bothKept', { name: master.name }), 'info');
  });
  return box;
}

async function upload(form: HTMLFormElement, status: HTMLElement, hooks: UploadHooks): Promise<void> {
  const file = field(form, 'file').files?.[0];
  if (file === undefined) {
    showNotice(status, t('seller.upload.chooseFile'), 'error');
    reveal(status);
    return;
  }
  const bar = el('progress', { max: String(file.size || 1), value: '0', 'aria-label': t('seller.upload.progress') });
  const words = el('span', {}, t('seller.upload.uploading', { file: file.name, size: formatSize(file.size) }));
  status.replaceChildren(el('div', { class: 'status-line', role: 'status' }, words, bar));
  reveal(status);
  const button = form.querySelector('button');
  if (button !== null) button.disabled = true;
  try {
    const master = await sendMaster(file, (done, total) => {
      bar.max = total || 1;
      bar.value = done;
      if (done >= total) words.textContent = t('seller.upload.checking');
    });
    form.reset();
    showNotice(status, t('seller.upload.added', { name: master.name, files: t('seller.files', { n: master.entries }),
      textures: t('seller.textures', { n: master.textures }), size: formatSize(master.size) }), 'success');
    if ((master.duplicateOf ?? []).length > 0) status.append(duplicateWarning(master, status, hooks));
    await hooks.refresh(master.masterId);
  } catch (err) {
    showProblem(status, err, t('seller.upload.notAdded'));
  } finally {
    if (button !== null) button.disabled = false;
    reveal(status);
  }
}

/** Wires the upload form; outcomes go to `status`. */
export function uploadForm(form: HTMLFormElement, status: HTMLElement, hooks: UploadHooks): void {
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void upload(form, status, hooks);
  });
}
