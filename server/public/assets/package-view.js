// The player's in-memory package: collects the reader's events (header, manifest, plaintext
// chunks of authenticated DATA chunks, per-entry verification, the final signature check)
// into one Uint8Array per entry, and draws it: file list, model3.json, textures on canvases.
//
// Nothing here leaves memory: no storage API, no object URL, no download link. Nothing is
// shown before the reader's 'end' event, the only statement that the signature verified, and
// `wipe()` zero-fills every buffer when the model is closed.
import { dataTable, el, formatBytes, formatTime } from './common.js';

/** Ceiling on the decoded size the page will hold, so a hostile manifest cannot exhaust memory. */
const MAX_DECODED_BYTES = 1024 * 1024 * 1024;
/** Largest canvas side Chromium, Firefox and Safari all accept. */
const MAX_CANVAS_SIDE = 16384;

/** A copy that does not read back as a consistent package. */
export class DamagedCopy extends Error {
  constructor(message) {
    super(message);
    this.name = 'DamagedCopy';
    this.code = 'DAMAGED';
  }
}

export class PackageAssembler {
  /** @param onProgress (doneBytes, totalBytes) after each chunk */
  constructor(onProgress = () => {}) {
    this.onProgress = onProgress;
    this.header = null;
    this.manifest = null;
    this.buffers = [];
    this.filled = [];
    this.verifiedEntries = new Set();
    this.verified = null;
    this.done = 0;
    this.total = 0;
  }

  add(event) {
    switch (event.type) {
      case 'header': this.header = event.header; break;
      case 'manifest': this.onManifest(event.manifest); break;
      case 'chunk': this.onChunk(event); break;
      case 'entryVerified': this.verifiedEntries.add(event.entry); break;
      case 'end': this.onEnd(event.verified); break;
      default: break; // 'locked' and future events carry nothing to show
    }
  }

  onManifest(manifest) {
    if (this.manifest !== null || !Array.isArray(manifest?.entries)) throw new DamagedCopy('unexpected manifest');
    const total = manifest.entries.reduce((sum, e) => sum + (Number.isSafeInteger(e.size) && e.size >= 0 ? e.size : Infinity), 0);
    if (!(total <= MAX_DECODED_BYTES)) {
      throw new DamagedCopy(`the model is larger (${formatBytes(total)}) than this page holds in memory`);
    }
    this.manifest = manifest;
    this.total = total;
    this.buffers = manifest.entries.map((e) => new Uint8Array(e.size));
    this.filled = manifest.entries.map(() => 0);
    this.onProgress(0, total);
  }

  onChunk({ entry, data }) {
    const buffer = this.buffers[entry];
    if (buffer === undefined) throw new DamagedCopy(`a chunk names entry ${entry}, which the manifest does not list`);
    const at = this.filled[entry];
    if (at + data.length > buffer.length) throw new DamagedCopy(`entry ${entry} is longer than its manifest size`);
    buffer.set(data, at);
    this.filled[entry] = at + data.length;
    this.done += data.length;
    this.onProgress(this.done, this.total);
  }

  onEnd(verified) {
    if (this.manifest === null) throw new DamagedCopy('the copy has no readable manifest');
    this.buffers.forEach((b, i) => {
      if (this.filled[i] !== b.length) throw new DamagedCopy(`entry ${i} is incomplete`);
    });
    this.verified = verified;
  }

  /** The package, once the signature verified. */
  result() {
    if (this.verified === null) throw new DamagedCopy('the copy ended before its signature');
    return {
      header: this.header, manifest: this.manifest, verified: this.verified,
      files: this.manifest.entries.map((info, i) => ({ info, bytes: this.buffers[i], verified: this.verifiedEntries.has(i) })),
    };
  }

  /** Zero-fills every buffer and forgets them. */
  wipe() {
    for (const b of this.buffers) b.fill(0);
    this.buffers = [];
    this.manifest = null;
  }
}

function licenseFacts(pkg) {
  const meta = pkg.manifest.meta ?? {};
  const license = meta.license ?? {};
  const signer = pkg.verified.signer ?? {};
  const rows = [
    ['Model', String(meta.name ?? '(unnamed)')],
    ['License', el('code', {}, String(license.id ?? '?'))],
    ['Licensed to', String(license.licenseeName || license.licensee || '?')],
    ['Issued', typeof license.issuedAt === 'number' ? formatTime(license.issuedAt) : '?'],
    ['Signed by', signer.kind === 'service' ? `the licensing service (${signer.service ?? 'unnamed'})` : `${signer.kind ?? 'unknown'} key`],
    ['Files', `${pkg.files.length}, ${formatBytes(pkg.files.reduce((s, f) => s + f.info.size, 0))} in memory`],
  ];
  return el('dl', { class: 'facts' }, rows.flatMap(([k, v]) => [el('dt', {}, k), el('dd', {}, v)]));
}

function fileTable(files) {
  return dataTable({
    id: 'file-list',
    caption: 'Files in the package, decrypted in memory',
    columns: [{ label: 'Path' }, { label: 'Type' }, { label: 'Encoding' }, { label: 'Size', num: true }],
    rows: files.map((f) => [el('span', { class: 'mono' }, f.info.path), f.info.type, f.info.encoding,
      el('span', { title: `${f.info.size} bytes` }, formatBytes(f.info.size))]),
  });
}

function modelJson(files) {
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

function textureFigure(file) {
  const { width, height } = file.info.meta ?? {};
  const caption = el('figcaption', {}, `${file.info.path} — ${width} × ${height}`);
  const drawable = Number.isInteger(width) && Number.isInteger(height) && width > 0 && height > 0
    && width <= MAX_CANVAS_SIDE && height <= MAX_CANVAS_SIDE && width * height * 4 === file.bytes.length;
  if (!drawable) return el('figure', {}, el('p', { class: 'notice error' }, 'This texture\'s size does not match its pixels.'), caption);
  const canvas = el('canvas', { width: String(width), height: String(height), role: 'img',
    'aria-label': `Texture ${file.info.path}, ${width} by ${height} pixels`, dataset: { path: file.info.path } });
  const pixels = new Uint8ClampedArray(file.bytes.buffer, file.bytes.byteOffset, file.bytes.byteLength);
  canvas.getContext('2d').putImageData(new ImageData(pixels, width, height), 0, 0);
  return el('figure', {}, canvas, caption);
}

/** Renders a verified package into `target`. */
export function renderPackage(target, pkg) {
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
