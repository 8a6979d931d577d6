/**
 * Shows a verified package on `/player`: the license facts, the file list and model3.json,
 * and a place for the built-in runtime (model-runtime-view.ts), which draws the textures
 * through the package resolver. Nothing becomes a URL, a download or stored data.
 */
import { type OpenedPackage, type PackageFile } from '@iki/core/browser';
import { formatDateTime, formatSize, t } from '../i18n/index.js';
import { dataTable, el, pathEl, type Child } from './dom.js';

const record = (value: unknown): Record<string, unknown> =>
  (typeof value === 'object' && value !== null ? value as Record<string, unknown> : {});

function licenseFacts(pkg: OpenedPackage): HTMLDListElement {
  const meta = record(pkg.manifest.meta);
  const license = record(meta['license']);
  const signer = record(pkg.verified.signer);
  const issuedAt = license['issuedAt'];
  const rows: [string, Child][] = [
    [t('package.model'), String(meta['name'] ?? t('package.unnamed'))],
    [t('package.license'), el('code', {}, String(license['id'] ?? '?'))],
    [t('package.licensedTo'), String(license['licenseeName'] || license['licensee'] || '?')],
    [t('package.issued'), typeof issuedAt === 'number' ? el('time', { title: new Date(issuedAt).toISOString() }, formatDateTime(issuedAt)) : '?'],
    [t('package.signedBy'), signer['kind'] === 'service' ? t('package.signedByService', { service: String(signer['service'] ?? '?') })
      : t('package.signedByKey', { kind: String(signer['kind'] ?? '?') })],
    [t('package.files'), t('package.filesInMemory', { count: pkg.files.length, size: formatSize(pkg.files.reduce((s, f) => s + f.info.size, 0)) })],
  ];
  return el('dl', { class: 'facts' }, rows.flatMap(([k, v]) => [el('dt', {}, k), el('dd', {}, v)]));
}

function fileTable(files: PackageFile[]): HTMLElement {
  return dataTable({
    id: 'file-list',
    caption: t('package.fileCaption'),
    columns: [{ label: t('package.col.path') }, { label: t('package.col.type') }, { label: t('package.col.encoding') },
      { label: t('package.col.size'), num: true }],
    rows: files.map((f) => [pathEl(f.info.path), f.info.type, f.info.encoding,
      el('span', { title: String(f.info.size) }, formatSize(f.info.size))]),
  });
}

function modelJson(files: PackageFile[]): HTMLElement {
  const file = files.find((f) => f.info.path.toLowerCase().endsWith('.model3.json'));
  if (file === undefined) return el('p', { class: 'meta' }, t('package.noModel3'));
  const text = new TextDecoder('utf-8').decode(file.bytes);
  let pretty = text;
  try {
    pretty = JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    // Shown as it is: the player resolves the package, this page only displays it.
  }
  return el('div', {}, el('p', { class: 'meta' }, pathEl(file.info.path)),
    el('pre', { id: 'model-json', tabindex: '0', 'aria-label': file.info.path }, el('code', {}, pretty)));
}

/**
 * Renders a verified package's facts, files and model JSON into `target`, and returns the
 * element the runtime (model-runtime-view.ts) draws the model into.
 */
export function renderPackage(target: Element, pkg: OpenedPackage): HTMLElement {
  const runtime = el('div', { id: 'runtime' });
  target.replaceChildren(
    licenseFacts(pkg),
    el('h3', {}, t('package.runtimeHeading')), runtime,
    el('h3', {}, t('package.files')), fileTable(pkg.files),
    el('h3', {}, 'model3.json'), modelJson(pkg.files),
  );
  return runtime;
}
