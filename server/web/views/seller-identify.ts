/**
 * A master's panel on `/seller`, "Identify a leaked texture": the image goes to the service,
 * which reads the license watermark (matching a resized or cropped leak to the master's
 * textures first) and names the license; when nothing is read, the answer says what is true
 * in the detector's own measures.
 */
import { stateBadge } from './license-state.js';
import { sessionApi, type IdentifyCandidate, type IdentifyResult, type IdentifyTexture, type Master } from '@iki/core/browser';
import { t, type MessageKey } from '../i18n/index.js';
import { busy, el, field, showNotice, showPending, showProblem, timeEl, type Child } from './dom.js';

const IMAGE_TYPES = new Set(['image/png', 'image/jpeg', 'image/webp']);

/** The words of the scored licenses (docs/watermark.md section 12), in one place for the message catalogs. */

/** "3e-12", or "1" for a chance that is not small. */
const chance = (p: number): string => (p >= 0.01 ? p.toFixed(2) : p.toExponential(0));

/** The scored licenses as a table, best first. */
function candidatesTable(candidates: IdentifyCandidate[]): HTMLElement {
  return el('table', { class: 'candidates' },
    el('caption', {}, t('seller.identify.candidates')),
    el('thead', {}, el('tr', {}, (['license', 'licensee', 'score', 'chance'] as const).map((c) => el('th', { scope: 'col' }, t(`seller.identify.col.${c}`))),
      el('th', { scope: 'col' }))),
    el('tbody', {}, candidates.map((c) => el('tr', { class: c.named ? 'named' : '' },
      el('td', {}, el('code', {}, c.licenseId)),
      el('td', {}, c.licenseeName ?? t('seller.identify.unknownLicensee')),
      el('td', {}, score(c.score)),
      el('td', {}, chance(c.falseAccusation)),
      el('td', {}, c.named ? el('span', { class: 'badge revoked' }, t('seller.identify.named')) : '')))));
}

/** The watermark reader's confidence score (docs/watermark.md section 7), one decimal. */
export const score = (value: unknown): string => (typeof value === 'number' && Number.isFinite(value) ? value.toFixed(1) : '?');


/** "resized to 90 %, the part from (120, 40), 800 x 600 pixels, of texture_00.png". */
function transformText(tex: IdentifyTexture): string {
  const scale = Math.round(((tex.scale.x + tex.scale.y) / 2) * 1000) / 10;
  const { region } = tex;
  const whole = region.x === 0 && region.y === 0 && region.width === tex.width && region.height === tex.height;
  const part = whole ? t('seller.identify.whole', { path: tex.path })
    : t('seller.identify.part', { width: region.width, height: region.height, x: region.x, y: region.y, path: tex.path });
  return t(scale === 100 ? 'seller.identify.original' : 'seller.identify.resized', { scale, part, width: tex.width, height: tex.height });
}

/** What is true when nothing was read, in the detector's own measures. */
function notFoundText(result: Extract<IdentifyResult, { found: false }>): string {
  const c = result.capacity;
  switch (result.reason) {
    case 'too_small':
      return t('seller.identify.tooSmall', { pixels: c?.visiblePixels ?? 0, score: score(c?.confidence ?? 0) });
    case 'too_busy':
      return t('seller.identify.tooBusy', { score: score(c?.confidence ?? 0) });
    case 'not_marked':
      return t('seller.identify.notMarked');
    case 'time_budget':
      return t('seller.identify.timeBudget');
    default:
      return t('seller.identify.noMatch');
  }
}

function identifyResult(result: IdentifyResult): HTMLElement {
  const where: [string, Child][] = result.texture === undefined ? []
    : [[t('seller.identify.texture'), [transformText(result.texture), el('span', { class: 'meta' },
      t('seller.identify.similarity', { value: result.texture.similarity.toFixed(3) }))]]];
  const scores = result.candidates.length === 0 ? [] : [candidatesTable(result.candidates)];
  if (!result.found && result.reason === 'mixed') {
    const named = result.candidates.filter((c) => c.named).length;
    return el('div', { class: 'notice warning', role: 'status' },
      el('p', {}, el('strong', {}, t('seller.identify.mixedTitle')), ' ',
        named > 0 ? t('seller.identify.mixedNamed', { count: named }) : t('seller.identify.mixedNone')),
      ...scores,
      ...(where.length === 0 ? [] : [el('dl', { class: 'facts' }, where.flatMap(([k, v]) => [el('dt', {}, k), el('dd', {}, v)]))]));
  }
  if (!result.found) {
    return el('div', { class: 'notice info', role: 'status' },
      el('p', {}, el('strong', {}, t('seller.identify.notFound')), ' ', notFoundText(result)),
      ...(where.length === 0 ? [] : [el('dl', { class: 'facts' }, where.flatMap(([k, v]) => [el('dt', {}, k), el('dd', {}, v)]))]),
      ...scores);
  }
  const l = result.license;
  const facts: [string, Child][] = [
    [t('seller.identify.license'), el('code', {}, result.licenseId)],
    [t('seller.identify.confidence'), [score(result.confidence), el('span', { class: 'meta' }, t('seller.identify.confidenceHint'))]],
    ...where,
  ];
  if (l !== null) {
    facts.push([t('seller.identify.licensee'), `${l.licensee.name}${l.licensee.email === undefined ? '' : ` <${l.licensee.email}>`} (${l.licensee.accountId})`], [t('seller.identify.issued'), timeEl(l.issuedAt)],
      [t('seller.identify.state'), stateBadge(l)], [t('seller.identify.releases'), String(l.releaseCount)]);
  } else {
    facts.push([t('seller.identify.licensee'), t('seller.identify.unknownLicense')]);
  }
  const carries: MessageKey = result.method === 'registered' ? 'seller.identify.carriesRegistered' : 'seller.identify.carries';
  return el('div', { class: 'notice success', role: 'status' },
    el('p', {}, el('strong', {}, t('seller.identify.found')), ' ', t(carries),
      ...(result.match === 'scored' ? [' ', t('seller.identify.scored')] : [])),
    el('dl', { class: 'facts' }, facts.flatMap(([k, v]) => [el('dt', {}, k), el('dd', {}, v)])),
    ...scores);
}

/** The identify form and where its answer shows; `reload` redraws the licenses after a hit. */
export function identifyForm(master: Master, reload: () => Promise<void>): [HTMLFormElement, HTMLElement] {
  const id = `leak-${master.masterId}`;
  const result = el('div', { class: 'result identify-result', 'aria-live': 'polite' });
  const form = el('form', { class: 'inline identify' },
    el('div', { class: 'file' },
      el('label', { for: id }, t('seller.identify.leaked')),
      el('input', { id, name: 'image', type: 'file', accept: 'image/png,image/jpeg,image/webp', required: true })),
    el('button', { type: 'submit', class: 'secondary' }, t('seller.identify.submit')));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const file = field(form, 'image').files?.[0];
    if (file === undefined || !IMAGE_TYPES.has(file.type)) {
      showNotice(result, t('seller.identify.chooseImage'), 'error');
      return;
    }
    showPending(result, t('seller.identify.reading', { file: file.name }));
    void busy(form, async () => {
      try {
        const answer = await sessionApi.call<IdentifyResult>(`/api/licenses/masters/${master.masterId}/identify`,
          { method: 'POST', body: file, type: file.type });
        result.replaceChildren(identifyResult(answer));
        // The answer carries the license's current state and release count: keep the table in step.
        if (answer.found && answer.license !== null) await reload();
      } catch (err) {
        showProblem(result, err);
      }
    });
  });
  return [form, result];
}

