/**
 * "Embed the player" on `/player` (issue 25 item 3): where an app gets the library this page
 * uses (`/downloads/iki-core.tgz`), its version and its SHA-256, read from the tarball's
 * `X-Iki-Core-Version` and `ETag` with a HEAD request, so a developer can check what npm
 * installed. Page text is in the
 * message catalogs (`player.embed.*`).
 */
import { t } from '../i18n/index.js';
import { el } from './dom.js';

const TARBALL = '/downloads/iki-core.tgz';

/** Appends the section to `target` once the tarball's facts are known; nothing when it is not built. */
export async function renderEmbedInfo(target: HTMLElement): Promise<void> {
  let answer: Response;
  try {
    answer = await fetch(TARBALL, { method: 'HEAD', cache: 'no-store' });
  } catch {
    return;
  }
  const sha256 = /^"([0-9a-f]{64})"$/.exec(answer.headers.get('etag') ?? '')?.[1];
  if (!answer.ok || sha256 === undefined) return;
  const url = new URL(TARBALL, location.origin).href;
  target.append(el('section', { id: 'embed', 'aria-labelledby': 'embed-title' },
    el('h2', { id: 'embed-title' }, t('player.embed.heading')),
    el('p', {}, t('player.embed.lead')),
    el('pre', {}, el('code', { id: 'embed-command' }, `npm install ${url}`)),
    el('dl', { class: 'facts' },
      el('dt', {}, t('player.embed.version')), el('dd', {}, el('code', { id: 'embed-version' }, answer.headers.get('x-iki-core-version') ?? '?')),
      el('dt', {}, t('player.embed.sha256')), el('dd', {}, el('code', { id: 'embed-sha256', class: 'mono' }, sha256))),
    el('p', { class: 'meta' }, t('player.embed.guide'))));
}
