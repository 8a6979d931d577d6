/**
 * `/seller`, "How to make a master": the service's recipient key and the exact commands that
 * make a master for this service (keygen, register-key, pack), each copyable. The service
 * address in the commands is the one the seller opened (`location.origin`), never a fixed host.
 */
import { currentSession, sessionApi, type ServiceKeys } from '@iki/core/browser';
import { cliCheckedInstallCommand, cliInstallCommand, cliNpxCommand, cliTarballSha256 } from './cli-install.js';
import { t, tParts } from '../i18n/index.js';
import { el, showProblem } from './dom.js';

/** A button that copies `text`, saying so on itself. */
export function copyButton(text: string, label: string): HTMLButtonElement {
  return el('button', {
    type: 'button', class: 'secondary small', 'aria-label': label,
    onclick: async (event: MouseEvent) => {
      const button = event.currentTarget as HTMLButtonElement;
      try {
        await navigator.clipboard.writeText(text);
        button.textContent = t('seller.key.copied');
      } catch {
        button.textContent = t('seller.key.selectCopy');
      }
    },
  }, t('seller.key.copy'));
}

/** `text` as one word of a POSIX shell command (quoted when it holds anything unusual). */
export function shellWord(text: string): string {
  return /^[A-Za-z0-9@%+=:,./_-]+$/.test(text) ? text : `'${text.replaceAll("'", "'\\''")}'`;
}

/** A command in a copyable block. */
function commandBlock(id: string, command: string, label: string): HTMLDivElement {
  return el('div', { class: 'command' }, el('pre', { id }, el('code', {}, command)), copyButton(command, label));
}

/** The tarball's SHA-256 and the command that checks it, or nothing when the service states none. */
async function tarballCheck(): Promise<HTMLElement | null> {
  const sha256 = await cliTarballSha256();
  if (sha256 === undefined) return null;
  return el('div', {},
    el('p', { class: 'meta' }, ...tParts('seller.key.sha256', { sha256: el('code', { class: 'mono', id: 'cli-sha256' }, sha256) })),
    el('p', { class: 'meta' }, t('seller.key.checkHow')),
    commandBlock('install-checked-command', cliCheckedInstallCommand(sha256), t('seller.key.copyChecked')));
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
        el('dt', {}, t('seller.key.serviceKey')), el('dd', {}, el('code', { class: 'mono', id: 'service-x25519' }, key), ' ',
          copyButton(key, t('seller.key.copyKey')))),
      el('ol', { class: 'steps' },
        el('li', {}, t('seller.key.install'),
          commandBlock('install-command', cliInstallCommand(), t('seller.key.copyInstall')), check,
          el('p', { class: 'meta' }, ...tParts('seller.key.npx', { command: el('code', {}, cliNpxCommand('--version')) }))),
        el('li', {}, t('seller.key.keygen'),
          commandBlock('keygen-command', keygen, t('seller.key.copyKeygen'))),
        el('li', {}, ...tParts('seller.key.register', { file: el('code', {}, 'seller.key.cert') }),
          commandBlock('register-command', register, t('seller.key.copyRegister'))),
        el('li', {}, t('seller.key.pack'),
          commandBlock('pack-service-command', packOnline, t('seller.key.copyPack')),
          el('p', { class: 'meta' }, t('seller.key.packOffline')),
          commandBlock('pack-command', packOffline, t('seller.key.copyPackOffline'))),
        el('li', {}, t('seller.key.upload'))),
    );
  } catch (err) {
    showProblem(target, err, t('seller.key.unavailable'));
  }
}
