/**
 * The player's built-in runtime (issue 12 item 3): loads the opened package through its
 * `PackageResolver` only, as a Cubism runtime would load an unprotected model from a server,
 * and shows what it got: every reference of the model JSON with how it resolved, every
 * texture drawn from its `ImageBitmap`, the sounds with a play button (decoded
 * `AudioBuffer`s), and the parameters of every motion and expression. Nothing becomes a URL:
 * bitmaps go to canvases, buffers to an `AudioBufferSourceNode`.
 */
import { loadModel, type LoadedModel, type PackageResolver, type ResolvedReference } from '@iki/core/browser';
import { formatNumber, t } from '../i18n/index.js';
import { dataTable, el, pathEl } from './dom.js';

/** What is running, so closing the player stops sound and frees the bitmaps. */
let running: { model: LoadedModel; audio: AudioContext } | null = null;

/** Stops the sounds, closes the bitmaps and the audio context. */
export function closeRuntime(): void {
  if (running === null) return;
  running.model.close();
  void running.audio.close().catch(() => {});
  running = null;
}

function referenceTable(refs: readonly ResolvedReference[]): HTMLElement {
  return dataTable({
    id: 'runtime-references',
    caption: t('runtime.refCaption'),
    columns: [{ label: t('runtime.col.reference') }, { label: t('runtime.col.role') }, { label: t('runtime.col.answer') }, { label: t('runtime.col.type') },
      { label: t('runtime.col.bytes'), num: true }],
    rows: refs.map((r) => ({
      dataset: { reference: r.reference, role: r.role, status: String(r.status), ok: String(r.status === 200 && r.error === undefined) },
      cells: [pathEl(r.reference), r.role,
        r.error === undefined ? String(r.status) : el('span', { class: 'badge revoked', title: r.error }, `${r.status}: ${r.error}`),
        r.type, formatNumber(r.bytes)],
    })),
  });
}

function textureFigures(model: LoadedModel): HTMLElement {
  if (model.textures.length === 0) return el('p', { class: 'meta' }, t('runtime.noTextures'));
  return el('div', { class: 'textures', id: 'textures' }, model.textures.map(({ reference, bitmap }) => {
    const canvas = el('canvas', { width: String(bitmap.width), height: String(bitmap.height), role: 'img',
      'aria-label': t('runtime.textureLabel', { path: reference, width: bitmap.width, height: bitmap.height }), dataset: { path: reference } });
    canvas.getContext('2d')?.drawImage(bitmap, 0, 0);
    return el('figure', {}, canvas, el('figcaption', {}, pathEl(reference), ` — ${bitmap.width} × ${bitmap.height}`));
  }));
}

function soundList(model: LoadedModel, audio: AudioContext): HTMLElement {
  if (model.sounds.length === 0) return el('p', { class: 'meta' }, t('runtime.noSounds'));
  return el('ul', { id: 'sounds' }, model.sounds.map(({ reference, buffer }) => el('li', {
    dataset: { sound: reference, duration: buffer.duration.toFixed(3), channels: String(buffer.numberOfChannels),
      sampleRate: String(buffer.sampleRate) },
  }, pathEl(reference), ` — ${t('runtime.sound', { duration: buffer.duration.toFixed(2), channels: buffer.numberOfChannels, rate: buffer.sampleRate })} `,
  el('button', { type: 'button', class: 'secondary small', 'aria-label': t('runtime.playLabel', { path: reference }), onclick: async () => {
    await audio.resume();
    const source = audio.createBufferSource();
    source.buffer = buffer;
    source.connect(audio.destination);
    source.start();
  } }, t('runtime.play')))));
}

function motionTable(model: LoadedModel): HTMLElement {
  if (model.motions.length === 0) return el('p', { class: 'meta' }, t('runtime.noMotions'));
  return dataTable({
    id: 'runtime-motions',
    columns: [{ label: t('runtime.col.group') }, { label: t('runtime.col.motion') }, { label: t('runtime.col.duration'), num: true },
      { label: t('runtime.col.parameters') }, { label: t('runtime.col.sound') }],
    rows: model.motions.map((m) => ({
      dataset: { motion: m.reference, group: m.group },
      cells: [m.group, pathEl(m.reference), m.duration === null ? '?' : t('runtime.seconds', { n: m.duration }),
        m.curves.map((c) => t('runtime.curve', { target: c.target, id: c.id, points: c.points })).join(', ') || t('runtime.none'), m.sound ?? ''],
    })),
  });
}

function expressionTable(model: LoadedModel): HTMLElement {
  if (model.expressions.length === 0) return el('p', { class: 'meta' }, t('runtime.noExpressions'));
  return dataTable({
    id: 'runtime-expressions',
    columns: [{ label: t('runtime.col.expression') }, { label: t('runtime.col.file') }, { label: t('runtime.col.expressionParameters') }],
    rows: model.expressions.map((e) => ({
      dataset: { expression: e.name },
      cells: [e.name, pathEl(e.reference),
        e.parameters.map((p) => `${p.id} ${p.blend} ${p.value}`).join(', ') || t('runtime.none')],
    })),
  });
}

/**
 * Loads the package's model through `resolver` and renders it into `target`. Resolves when
 * everything is drawn; `target.dataset.runtime` is then `ready` (or `failed`).
 */
export async function renderRuntime(target: HTMLElement, resolver: PackageResolver): Promise<void> {
  closeRuntime();
  target.dataset['runtime'] = 'loading';
  target.replaceChildren(el('p', { class: 'meta' }, t('runtime.loading')));
  const audio = new AudioContext();
  let model: LoadedModel;
  try {
    model = await loadModel(resolver, { audio });
  } catch (err) {
    void audio.close().catch(() => {});
    target.dataset['runtime'] = 'failed';
    target.replaceChildren(el('p', { class: 'notice error' }, t('runtime.failed', { message: err instanceof Error ? err.message : String(err) })));
    return;
  }
  running = { model, audio };
  const failed = model.references.filter((r) => r.status !== 200 || r.error !== undefined).length;
  const files = new Set(model.references.filter((r) => r.role !== 'model').map((r) => r.url)).size;
  target.replaceChildren(
    el('p', { class: failed === 0 ? 'notice success' : 'notice error', id: 'runtime-summary' },
      failed === 0 ? t('runtime.allResolved', { files }) : t('runtime.someFailed', { failed, files: model.references.length })),
    referenceTable(model.references),
    el('h3', {}, t('runtime.textures', { n: model.textures.length })), textureFigures(model),
    el('h3', {}, t('runtime.sounds', { n: model.sounds.length })), soundList(model, audio),
    el('h3', {}, t('runtime.motions', { n: model.motions.length })), motionTable(model),
    el('h3', {}, t('runtime.expressions', { n: model.expressions.length })), expressionTable(model),
    el('p', { class: 'meta' }, t('runtime.facts', { physics: String(model.physicsSettings), pose: String(model.poseGroups),
      display: model.displayParameters.map((p) => p.name || p.id).join(', ') || t('runtime.none') })),
  );
  target.dataset['runtime'] = 'ready';
}
