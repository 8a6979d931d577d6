/**
 * Draws a verified package on `/player`: the license facts, the file list, model3.json and
 * every texture on a canvas from its pixels in memory. Nothing becomes a URL, a download or
 * stored data: the pixels go straight into `ImageData`.
 */
import { formatBytes, formatTime, type OpenedPackage, type PackageFile } from '@iki/core/browser';
import { dataTable, el, type Child } from './dom.js';

/** Largest canvas side Chromium, Firefox and Safari all accept. */
const MAX_CANVAS_SIDE = 16384;

const record = (value: unknown): Record<string, unknown> =>
  (typeof value === 'object' && value !== null ? value as Record<string, unknown> : {});

function licenseFacts(pkg: OpenedPackage): HTMLDListElement {
  const meta = record(pkg.manifest.meta);
  const license = record(meta['license']);
  const signer = record(pkg.verified.signer);
  const issuedAt = license['issuedAt'];
  const rows: [string, Child][] = [
    ['Model', String(meta['name'] ?? '(unnamed)')],
    ['License', el('code', {}, String(license['id'] ?? '?'))],
    ['Licensed to', String(license['licenseeName'] || license['licensee'] || '?')],
    ['Issued', typeof issuedAt === 'number' ? formatTime(issuedAt) : '?'],
    ['Signed by', signer['kind'] === 'service' ? `the licensing service (${String(signer['service'] ?? 'unnamed')})` : `${String(signer['kind'] ?? 'unknown')} key`],
    ['Files', `${pkg.files.length}, ${formatBytes(pkg.files.reduce((s, f) => s + f.info.size, 0))} in memory`],
  ];
  return el('dl', { class: 'facts' }, rows.flatMap(([k, v]) => [el('dt', {}, k), el('dd', {}, v)]));
}

function fileTable(files: PackageFile[]): HTMLElement {
  return dataTable({
    id: 'file-list',
    caption: 'Files in the package, decrypted in memory',
    columns: [{ label: 'Path' }, { label: 'Type' }, { label: 'Encoding' }, { label: 'Size', num: true }],
    rows: files.map((f) => [el('span', { class: 'mono' }, f.info.path), f.info.type, f.info.encoding,
      el('span', { title: `${f.info.size} bytes` }, formatBytes(f.info.size))]),
  });
}

function modelJson(files: PackageFile[]): HTMLElement {
  const file = files.find((f) => f.info.path.toLowerCase().endsWith('.model3.json'));
  if (file === undefined) return el('p', { class: 'meta' }, 'This package has no model3.json.');
  const text = new TextDecoder('utf-8').decode(file.bytes);
  let pretty = text;
  try {
    pretty = JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    // Shown as it is: the player resolves the package, this page only displays it.
  }
  return el('div', {}, el('p', { class: 'meta mono' }, file.info.path),
    el('pre', { id: 'model-json', tabindex: '0', 'aria-label': file.info.path }, el('code', {}, pretty)));
}

function textureFigure(file: PackageFile): HTMLElement {
  const { width, height } = file.info.meta ?? {};
  const caption = el('figcaption', {}, `${file.info.path} — ${width} × ${height}`);
  if (width === undefined || height === undefined || !Number.isInteger(width) || !Number.isInteger(height) || width <= 0 || height <= 0
    || width > MAX_CANVAS_SIDE || height > MAX_CANVAS_SIDE || width * height * 4 !== file.bytes.length) {
    return el('figure', {}, el('p', { class: 'notice error' }, 'This texture\'s size does not match its pixels.'), caption);
  }
  const canvas = el('canvas', { width: String(width), height: String(height), role: 'img',
    'aria-label': `Texture ${file.info.path}, ${width} by ${height} pixels`, dataset: { path: file.info.path } });
  const pixels = new Uint8ClampedArray(file.bytes.buffer as ArrayBuffer, file.bytes.byteOffset, file.bytes.byteLength);
  canvas.getContext('2d')?.putImageData(new ImageData(pixels, width, height), 0, 0);
  return el('figure', {}, canvas, caption);
}

/** Renders a verified package into `target`. */
export function renderPackage(target: Element, pkg: OpenedPackage): void {
  const textures = pkg.files.filter((f) => f.info.encoding === 'rgba8');
  target.replaceChildren(
    licenseFacts(pkg),
    el('h3', {}, 'Files'), fileTable(pkg.files),
    el('h3', {}, 'model3.json'), modelJson(pkg.files),
    el('h3', {}, `Textures (${textures.length})`),
    textures.length === 0 ? el('p', { class: 'meta' }, 'No textures.')
      : el('div', { class: 'textures', id: 'textures' }, textures.map(textureFigure)),
  );
}
