/**
 * `/seller`: the service key and the commands that make a master (keygen, register-key, pack),
 * master upload with progress, and the list of the seller's masters (each opens into its
 * licenses panel, see views/seller-master.ts).
 */
import {
  ApiProblem, currentSession, formatBytes, problemFrom, refreshSession, sessionApi, type Master, type ServiceKeys,
} from '@iki/core/browser';
import {
  byId, el, field, plural, renderSessionBar, requireSession, showNotice, showProblem, timeEl,
} from '../views/dom.js';
import { masterPanel } from '../views/seller-master.js';
import { cliInstallCommand, cliNpxCommand } from '../views/cli-install.js';
import { masterExportSection } from '../views/seller-export.js';

const MODEL_MEDIA_TYPE = 'application/vnd.iki.model';
/** Masters whose panel is open, kept open across refreshes of the list. */
const openMasters = new Set<string>();

function copyButton(text: string, label: string): HTMLButtonElement {
  return el('button', {
    type: 'button', class: 'secondary small', 'aria-label': label,
    onclick: async (event: MouseEvent) => {
      const button = event.currentTarget as HTMLButtonElement;
      try {
        await navigator.clipboard.writeText(text);
        button.textContent = 'Copied';
      } catch {
        button.textContent = 'Select and copy';
      }
    },
  }, 'Copy');
}

/** `text` as one word of a POSIX shell command (quoted when it holds anything unusual). */
function shellWord(text: string): string {
  return /^[A-Za-z0-9@%+=:,./_-]+$/.test(text) ? text : `'${text.replaceAll("'", "'\\''")}'`;
}

/** A command in a copyable block. */
function commandBlock(id: string, command: string, label: string): HTMLDivElement {
  return el('div', { class: 'command' }, el('pre', { id }, el('code', {}, command)), copyButton(command, label));
}

/** The service's recipient key and the exact commands that make a master for it. */
async function showServiceKey(): Promise<void> {
  const target = byId('service-key');
  try {
    const keys = await sessionApi.call<ServiceKeys>('/api/keys/service');
    const key = keys.x25519PublicKey;
    const service = shellWord(location.origin);
    const email = shellWord(currentSession()?.email ?? 'you@example.com');
    const keygen = 'iki keygen -o seller.key';
    const register = `iki register-key --key seller.key --service ${service} --email ${email}`;
    const packOnline = `iki pack ./my-model --key seller.key --service ${service} -o my-model.ikm`;
    const packOffline = `iki pack ./my-model --key seller.key --recipient ${key} -o my-model.ikm`;
    target.replaceChildren(
      el('dl', { class: 'facts' },
        el('dt', {}, 'Service key'), el('dd', {}, el('code', { class: 'mono', id: 'service-x25519' }, key), ' ',
          copyButton(key, 'Copy the service key'))),
      el('ol', { class: 'steps' },
        el('li', {}, 'Once: install the iki command-line tool from this service (Node.js 20 or later; no repository needed):',
          commandBlock('install-command', cliInstallCommand(), 'Copy the install command'),
          el('p', { class: 'meta' }, 'Or run it without installing, e.g. ', el('code', {}, cliNpxCommand('--version')), '.')),
        el('li', {}, 'Once: make a signing key (keep seller.key private):',
          commandBlock('keygen-command', keygen, 'Copy the keygen command')),
        el('li', {}, 'Once: register it with your account. It asks for your password and writes the key\'s certificate to ',
          el('code', {}, 'seller.key.cert'), ', next to the key:',
          commandBlock('register-command', register, 'Copy the register-key command')),
        el('li', {}, 'For each model folder, pack it sealed to this service and signed with your registered key:',
          commandBlock('pack-service-command', packOnline, 'Copy the pack command'),
          el('p', { class: 'meta' }, 'Or, on a machine that cannot reach this service, with its key (above) given directly:'),
          commandBlock('pack-command', packOffline, 'Copy the pack command with the service key')),
        el('li', {}, 'Upload the .ikm file below. The service decrypts and checks every chunk and the signature before it keeps it.')),
    );
  } catch (err) {
    showProblem(target, err, 'The service key is not available.');
  }
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

async function upload(event: SubmitEvent): Promise<void> {
  event.preventDefault();
  const form = event.currentTarget as HTMLFormElement;
  const status = byId('upload-status');
  const file = field(form, 'file').files?.[0];
  if (file === undefined) {
    showNotice(status, 'Choose a master file (.ikm) first.', 'error');
    return;
  }
  const bar = el('progress', { max: String(file.size || 1), value: '0', 'aria-label': 'Upload progress' });
  const words = el('span', {}, `Uploading ${file.name} (${formatBytes(file.size)})…`);
  status.replaceChildren(el('div', { class: 'status-line', role: 'status' }, words, bar));
  const button = form.querySelector('button');
  if (button !== null) button.disabled = true;
  try {
    const master = await sendMaster(file, (done, total) => {
      bar.max = total || 1;
      bar.value = done;
      if (done >= total) words.textContent = 'Uploaded. The service is checking every chunk and the signature…';
    });
    form.reset();
    showNotice(status, `“${master.name}” passed the check and was added: ${plural(master.entries, 'file')}, ${plural(master.textures, 'texture')}, ${formatBytes(master.size)}.`, 'success');
    openMasters.add(master.masterId);
    await loadMasters();
  } catch (err) {
    showProblem(status, err, 'The master was not added.');
  } finally {
    if (button !== null) button.disabled = false;
  }
}

function masterItem(master: Master): HTMLDetailsElement {
  const body = el('div', { class: 'body' });
  const count = el('span', { class: 'meta' }, plural(master.licenseCount ?? 0, 'license'));
  const details = el('details', { class: 'master', dataset: { masterId: master.masterId } },
    el('summary', {},
      el('strong', {}, master.name),
      el('span', { class: 'meta' }, `${plural(master.textures, 'texture')} · ${plural(master.entries, 'file')} · ${formatBytes(master.size)}`),
      count,
      el('span', { class: 'meta' }, 'uploaded ', timeEl(master.createdAt))),
    body);
  let loaded = false;
  details.addEventListener('toggle', () => {
    if (details.open) openMasters.add(master.masterId);
    else openMasters.delete(master.masterId);
    if (details.open && !loaded) {
      loaded = true;
      masterPanel(body, master, (n) => { count.textContent = plural(n, 'license'); }).catch((err: unknown) => showProblem(body, err));
    }
  });
  if (openMasters.has(master.masterId)) details.open = true;
  return details;
}

async function loadMasters(): Promise<void> {
  const target = byId('masters');
  try {
    const { masters } = await sessionApi.call<{ masters: Master[] }>('/api/licenses/masters');
    if (masters.length === 0) {
      target.replaceChildren(el('p', { class: 'meta' }, 'No masters yet. Upload one above.'));
      return;
    }
    target.replaceChildren(...masters.map(masterItem));
  } catch (err) {
    showProblem(target, err);
  }
}

renderSessionBar();
if (requireSession(byId('gate')) !== null) {
  byId('dashboard').hidden = false;
  byId('dashboard').prepend(masterExportSection((id) => {
    openMasters.add(id);
    void loadMasters();
  }));
  byId<HTMLFormElement>('upload').addEventListener('submit', (e) => void upload(e));
  void showServiceKey();
  void loadMasters();
}
