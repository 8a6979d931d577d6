/**
 * What the project page shows of an opened project: the signer's verdict first (docs/format.md
 * 7.3), then meta, the assets (image previews drawn from decoded pixels on a canvas, never from
 * a URL) and the snapshot as text. Every string from the file reaches the DOM as text through
 * `el`, so markup in a snapshot or a name stays text.
 */
import { type AssetInfo, type OpenResult, type Preview, type Verdict } from '@iki/core/browser';
import { formatDateTime, formatSize, t } from '../i18n/index.js';
import { dataTable, el } from './dom.js';

/** The verdict in plain words, with `data-verdict` for styles and tests. */
export function verdictView(verdict: Verdict, ownEmail?: string): HTMLElement {
  switch (verdict.kind) {
    case 'account': {
      const revoked = verdict.revocation === 'revoked';
      const email = verdict.email ?? ownEmail;
      const state = t(revoked ? 'verdict.stateRevoked' : verdict.revocation === 'unknown' ? 'verdict.stateUnknown' : 'verdict.stateActive');
      return el('div', { class: 'verdict', role: 'status', 'data-verdict': revoked ? 'revoked' : 'account', 'data-account': verdict.accountId },
        el('strong', {}, t(revoked ? 'verdict.revoked' : 'verdict.account', { account: verdict.accountId })),
        email === undefined ? null : el('p', {}, t('verdict.yourAccount', { email })),
        el('p', {}, state),
        el('p', { class: 'fingerprint' }, t('verdict.key', { fingerprint: verdict.fingerprint, thisDevice: verdict.thisDevice ? 'yes' : 'no' })));
    }
    case 'device':
      return el('div', { class: 'verdict', role: 'status', 'data-verdict': 'device' },
        el('strong', {}, t('verdict.device', { thisDevice: verdict.thisDevice ? 'yes' : 'no' })),
        el('p', { class: 'fingerprint' }, t('verdict.fingerprint', { fingerprint: verdict.fingerprint })),
        verdict.unverifiedAccount === undefined ? null
          : el('p', {}, t('verdict.claims', { account: verdict.unverifiedAccount.accountId, reason: verdict.unverifiedAccount.reason })),
        el('p', { class: 'meta' }, t('verdict.deviceOnly')));
    case 'modified':
      return el('div', { class: 'verdict', role: 'alert', 'data-verdict': 'modified' },
        el('strong', {}, t('verdict.modified')),
        el('p', {}, t(verdict.signatureFailed ? 'verdict.signatureFailed' : 'verdict.damagedParts')),
        verdict.damaged.length === 0 ? null : el('p', { class: 'meta' }, t('verdict.damagedList', { names: verdict.damaged.join(', ') })));
    case 'legacy':
      return el('div', { class: 'verdict', role: 'status', 'data-verdict': 'legacy' },
        el('strong', {}, t('verdict.legacy')),
        el('p', {}, t('verdict.legacyText')));
  }
}

/** Meta of the project. */
export function metaView(opened: OpenResult): HTMLElement {
  const m = opened.meta;
  return el('dl', { class: 'meta-list' },
    el('dt', {}, t('meta.name')), el('dd', { 'data-field': 'name' }, m.name),
    el('dt', {}, t('meta.canvas')), el('dd', {}, `${m.canvas.width} × ${m.canvas.height}`),
    m.savedAt === undefined ? null : [el('dt', {}, t('meta.saved')), el('dd', {}, el('time', { datetime: m.savedAt, title: m.savedAt }, formatDateTime(m.savedAt)))],
    m.app === undefined ? null : [el('dt', {}, t('meta.app')), el('dd', {}, m.app)],
    el('dt', {}, t('meta.protection')), el('dd', {}, t(opened.encrypted ? 'meta.encrypted' : 'meta.none')));
}

/** The snapshot as text: JSON, shown in a <pre> as characters, never as markup. */
export function snapshotView(snapshot: Record<string, unknown>): HTMLElement {
  return el('pre', { class: 'snapshot', 'data-field': 'snapshot' }, JSON.stringify(snapshot, null, 2));
}

/** A canvas with `preview`'s pixels. */
export function previewCanvas(preview: Preview, name: string): HTMLCanvasElement {
  const canvas = el('canvas', { width: preview.width, height: preview.height, 'aria-label': t('assets.previewOf', { name }), 'data-preview': name });
  const context = canvas.getContext('2d');
  context?.putImageData(new ImageData(preview.rgba as Uint8ClampedArray<ArrayBuffer>, preview.width, preview.height), 0, 0);
  return canvas;
}

/** The assets, each with a button to show its preview (images) or its size. */
export function assetsView(assets: readonly AssetInfo[], onPreview: (asset: AssetInfo, cell: HTMLElement) => void): HTMLElement {
  return dataTable({
    caption: t('assets.caption', { count: assets.length }),
    columns: [{ label: t('assets.col.name') }, { label: t('assets.col.type') }, { label: t('assets.col.size'), num: true }, { label: t('assets.col.preview') }],
    rows: assets.map((asset) => {
      const cell = el('div', { class: 'preview' });
      const button = asset.damaged ? el('span', { class: 'meta' }, t('assets.damaged'))
        : el('button', { type: 'button', class: 'secondary small', onclick: () => onPreview(asset, cell) }, t('assets.show'));
      return { cells: [asset.name, asset.type, formatSize(asset.size), [button, cell]], dataset: { asset: asset.name } };
    }),
  });
}
