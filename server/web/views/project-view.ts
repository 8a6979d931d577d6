/**
 * What the project page shows of an opened project: the signer's verdict first (docs/format.md
 * 7.3), then meta, the assets (image previews drawn from decoded pixels on a canvas, never from
 * a URL) and the snapshot as text. Every string from the file reaches the DOM as text through
 * `el`, so markup in a snapshot or a name stays text.
 */
import { formatBytes, type AssetInfo, type OpenResult, type Preview, type Verdict } from '@iki/core/browser';
import { dataTable, el } from './dom.js';

/** The verdict in plain words, with `data-verdict` for styles and tests. */
export function verdictView(verdict: Verdict, ownEmail?: string): HTMLElement {
  switch (verdict.kind) {
    case 'account': {
      const revoked = verdict.revocation === 'revoked';
      const email = verdict.email ?? ownEmail;
      const state = revoked ? 'The account revoked this key: files it signs are no longer vouched for.'
        : verdict.revocation === 'unknown' ? 'Revocation status unknown (offline): the certificate was checked against the last known service key.'
          : 'The key is active.';
      return el('div', { class: 'verdict', role: 'status', 'data-verdict': revoked ? 'revoked' : 'account', 'data-account': verdict.accountId },
        el('strong', {}, revoked ? `Signed by the account ${verdict.accountId}, key REVOKED` : `Signed by a verified account: ${verdict.accountId}`),
        email === undefined ? null : el('p', {}, `Your account (${email}).`),
        el('p', {}, state),
        el('p', { class: 'fingerprint' }, `Key ${verdict.fingerprint}${verdict.thisDevice ? ' (this browser\'s key)' : ''}`));
    }
    case 'device':
      return el('div', { class: 'verdict', role: 'status', 'data-verdict': 'device' },
        el('strong', {}, `Signed by an unverified device key${verdict.thisDevice ? ': this browser\'s key' : ''}`),
        el('p', { class: 'fingerprint' }, `Fingerprint ${verdict.fingerprint}`),
        verdict.unverifiedAccount === undefined ? null
          : el('p', {}, `It claims the account ${verdict.unverifiedAccount.accountId}, but that does not hold: ${verdict.unverifiedAccount.reason}.`),
        el('p', { class: 'meta' }, 'This only says that this key signed the file, not who owns it.'));
    case 'modified':
      return el('div', { class: 'verdict', role: 'alert', 'data-verdict': 'modified' },
        el('strong', {}, 'Modified after it was signed'),
        el('p', {}, verdict.signatureFailed
          ? 'The signature does not match the contents: someone or something changed this file after it was signed. Nothing in it is presented as signed.'
          : 'Parts of the content are damaged.'),
        verdict.damaged.length === 0 ? null : el('p', { class: 'meta' }, `Damaged: ${verdict.damaged.join(', ')}`));
    case 'legacy':
      return el('div', { class: 'verdict', role: 'status', 'data-verdict': 'legacy' },
        el('strong', {}, 'Legacy bundle, not signed'),
        el('p', {}, 'An older .rigproj bundle: it opens read only; saving writes a signed .iki.'));
  }
}

/** Meta of the project. */
export function metaView(opened: OpenResult): HTMLElement {
  const m = opened.meta;
  return el('dl', { class: 'meta-list' },
    el('dt', {}, 'Name'), el('dd', { 'data-field': 'name' }, m.name),
    el('dt', {}, 'Canvas'), el('dd', {}, `${m.canvas.width} × ${m.canvas.height}`),
    m.savedAt === undefined ? null : [el('dt', {}, 'Saved'), el('dd', {}, m.savedAt)],
    m.app === undefined ? null : [el('dt', {}, 'Application'), el('dd', {}, m.app)],
    el('dt', {}, 'Protection'), el('dd', {}, opened.encrypted ? 'encrypted' : 'none'));
}

/** The snapshot as text: JSON, shown in a <pre> as characters, never as markup. */
export function snapshotView(snapshot: Record<string, unknown>): HTMLElement {
  return el('pre', { class: 'snapshot', 'data-field': 'snapshot' }, JSON.stringify(snapshot, null, 2));
}

/** A canvas with `preview`'s pixels. */
export function previewCanvas(preview: Preview, name: string): HTMLCanvasElement {
  const canvas = el('canvas', { width: preview.width, height: preview.height, 'aria-label': `Preview of ${name}`, 'data-preview': name });
  const context = canvas.getContext('2d');
  context?.putImageData(new ImageData(preview.rgba as Uint8ClampedArray<ArrayBuffer>, preview.width, preview.height), 0, 0);
  return canvas;
}

/** The assets, each with a button to show its preview (images) or its size. */
export function assetsView(assets: readonly AssetInfo[], onPreview: (asset: AssetInfo, cell: HTMLElement) => void): HTMLElement {
  return dataTable({
    caption: `${assets.length} asset${assets.length === 1 ? '' : 's'}`,
    columns: [{ label: 'Name' }, { label: 'Type' }, { label: 'Size', num: true }, { label: 'Preview' }],
    rows: assets.map((asset) => {
      const cell = el('div', { class: 'preview' });
      const button = asset.damaged ? el('span', { class: 'meta' }, 'damaged')
        : el('button', { type: 'button', class: 'secondary small', onclick: () => onPreview(asset, cell) }, 'Show');
      return { cells: [asset.name, asset.type, formatBytes(asset.size), [button, cell]], dataset: { asset: asset.name } };
    }),
  });
}
