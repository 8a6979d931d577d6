/**
 * `/seller`, "How to make a master": the service's recipient key and the exact commands that
 * make a master for this service (keygen, register-key, pack), each copyable. The service
 * address in the commands is the one the seller opened (`location.origin`), never a fixed host.
 */
import { currentSession, sessionApi, type ServiceKeys } from '@iki/core/browser';
import { cliCheckedInstallCommand, cliInstallCommand, cliNpxCommand, cliTarballSha256 } from './cli-install.js';
import { el, showProblem } from './dom.js';

/** A button that copies `text`, saying so on itself. */
export function copyButton(text: string, label: string): HTMLButtonElement {
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
export function shellWord(text: string): string {
  return /^[A-Za-z0-9@%+=:,./_-]+$/.test(text) ? text : `'${text.replaceAll("'", "'\\''")}'`;
}

/** A command in a copyable block. */
function commandBlock(id: string, command: string, label: string): HTMLDivElement {
  return el('div', { class: 'command' }, el('pre', { id }, el('code', {}, command)), copyButton(command, label));
}

/** The words of the tarball check (issue 22 item 11), in one place for the message catalogs. */
const CHECK_TEXT = {
  sha256: 'SHA-256 of the tarball: ',
  how: 'To check the download before installing it, run this instead (on macOS use shasum -a 256 -c - for sha256sum -c -):',
  copy: 'Copy the checked install command',
} as const;

/** The tarball's SHA-256 and the command that checks it, or nothing when the service states none. */
async function tarballCheck(): Promise<HTMLElement | null> {
  const sha256 = await cliTarballSha256();
  if (sha256 === undefined) return null;
  return el('div', {},
    el('p', { class: 'meta' }, CHECK_TEXT.sha256, el('code', { class: 'mono', id: 'cli-sha256' }, sha256)),
    el('p', { class: 'meta' }, CHECK_TEXT.how),
    commandBlock('install-checked-command', cliCheckedInstallCommand(sha256), CHECK_TEXT.copy));
}

/** Fills `target` with the service key and the commands that make a master for it. */
export async function showServiceKey(target: HTMLElement): Promise<void> {
  try {
    const [keys, check] = await Promise.all([sessionApi.call<ServiceKeys>('/api/keys/service'), tarballCheck()]);
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
          commandBlock('install-command', cliInstallCommand(), 'Copy the install command'), check,
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
        el('li', {}, 'Upload the .ikm file with the form above. The service decrypts and checks every chunk and the signature before it keeps it.')),
    );
  } catch (err) {
    showProblem(target, err, 'The service key is not available.');
  }
}
