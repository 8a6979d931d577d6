/**
 * A master's panel on `/seller`, "Identify a leaked texture": the image goes to the service,
 * which reads the license watermark (matching a resized or cropped leak to the master's
 * textures first) and names the license; when nothing is read, the answer says what is true
 * in the detector's own measures.
 */
import { stateBadge } from './license-state.js';
import { sessionApi, type IdentifyCandidate, type IdentifyResult, type IdentifyTexture, type Master } from '@iki/core/browser';
import { busy, el, field, showNotice, showPending, showProblem, timeEl, type Child } from './dom.js';

const IMAGE_TYPES = new Set(['image/png', 'image/jpeg', 'image/webp']);

/** The words of the scored licenses (docs/watermark.md section 12), in one place for the message catalogs. */
const SCORES = {
  caption: 'Licenses issued for this master, by their score against this image',
  columns: ['License', 'Licensee', 'Score', 'Chance an innocent license scores this high', ''],
  named: 'named',
  unknownLicensee: 'unknown',
  mixedTitle: 'Several copies were mixed. ',
  mixedNamed: (n: number) => `The image carries this master's watermark, but averaged or pieced together from differently`
    + ` licensed copies. The scores name ${n === 1 ? 'one license' : `${n} licenses`} whose copies were mixed into it`
    + ' (each with a chance below one in a million of naming an innocent license):',
  mixedNone: 'The image carries this master\'s watermark, but averaged or pieced together from differently licensed'
    + ' copies, and no license scores high enough to be named (a chance below one in a million of naming an innocent one).',
  scored: ' Its watermark\'s check bits no longer read, so it was named by its score against the licenses issued for this master'
    + ' (a chance below one in a billion of naming an innocent license).',
} as const;

/** "3e-12", or "1" for a chance that is not small. */
const chance = (p: number): string => (p >= 0.01 ? p.toFixed(2) : p.toExponential(0));

/** The scored licenses as a table, best first. */
function candidatesTable(candidates: IdentifyCandidate[]): HTMLElement {
  return el('table', { class: 'candidates' },
    el('caption', {}, SCORES.caption),
    el('thead', {}, el('tr', {}, SCORES.columns.map((c) => el('th', { scope: 'col' }, c)))),
    el('tbody', {}, candidates.map((c) => el('tr', { class: c.named ? 'named' : '' },
      el('td', {}, el('code', {}, c.licenseId)),
      el('td', {}, c.licenseeName ?? SCORES.unknownLicensee),
      el('td', {}, score(c.score)),
      el('td', {}, chance(c.falseAccusation)),
      el('td', {}, c.named ? el('span', { class: 'badge revoked' }, SCORES.named) : '')))));
}

/** The watermark reader's confidence score (docs/watermark.md section 7), one decimal. */
export const score = (value: unknown): string => (typeof value === 'number' && Number.isFinite(value) ? value.toFixed(1) : '?');


/** "resized to 90 %, the part from (120, 40), 800 x 600 pixels, of texture_00.png". */
function transformText(t: IdentifyTexture): string {
  const scale = Math.round(((t.scale.x + t.scale.y) / 2) * 1000) / 10;
  const whole = t.region.x === 0 && t.region.y === 0 && t.region.width === t.width && t.region.height === t.height;
  const part = whole ? `the whole of ${t.path}` : `the part ${t.region.width} x ${t.region.height} from (${t.region.x}, ${t.region.y}) of ${t.path}`;
  return `${scale === 100 ? 'at its original size' : `resized to ${scale} %`}, ${part} (${t.width} x ${t.height})`;
}

/** What is true when nothing was read, in the detector's own measures. */
function notFoundText(result: Extract<IdentifyResult, { found: false }>): string {
  const c = result.capacity;
  switch (result.reason) {
    case 'too_small':
      return `This image is too small to carry the watermark: ${c?.visiblePixels ?? 0} visible pixels, and the mark needs `
        + `about 64 x 64 (4,096). Even freshly marked it would read with a score of ${score(c?.confidence ?? 0)} (a read needs 10).`;
    case 'too_busy':
      return `This image cannot carry a readable watermark: its own noise or fine detail drowns the mark. Even freshly `
        + `marked it would read with a score of ${score(c?.confidence ?? 0)} (a read needs 10).`;
    case 'not_marked':
      return 'The image matches a texture of this master (below), but no license watermark of this master could be read '
        + 'from it: it may come from the unmarked original, or be too degraded.';
    case 'time_budget':
      return 'The search through this master\'s textures ran out of time before it was done; try again, or a less altered copy.';
    default:
      return 'No texture of this master matches this image (resized from 50 % to 200 %, or cropped to a quarter of a '
        + 'texture at least), and it carries no watermark of this master as it is. Rotated, mirrored or repainted images '
        + 'are not recognised.';
  }
}

function identifyResult(result: IdentifyResult): HTMLElement {
  const where: [string, Child][] = result.texture === undefined ? []
    : [['Texture', [transformText(result.texture), el('span', { class: 'meta' },
      ` (similarity ${result.texture.similarity.toFixed(3)})`)]]];
  const scores = result.candidates.length === 0 ? [] : [candidatesTable(result.candidates)];
  if (!result.found && result.reason === 'mixed') {
    const named = result.candidates.filter((c) => c.named).length;
    return el('div', { class: 'notice warning', role: 'status' },
      el('p', {}, el('strong', {}, SCORES.mixedTitle), named > 0 ? SCORES.mixedNamed(named) : SCORES.mixedNone),
      ...scores,
      ...(where.length === 0 ? [] : [el('dl', { class: 'facts' }, where.flatMap(([k, v]) => [el('dt', {}, k), el('dd', {}, v)]))]));
  }
  if (!result.found) {
    return el('div', { class: 'notice info', role: 'status' },
      el('p', {}, el('strong', {}, 'Not found. '), notFoundText(result)),
      ...(where.length === 0 ? [] : [el('dl', { class: 'facts' }, where.flatMap(([k, v]) => [el('dt', {}, k), el('dd', {}, v)]))]),
      ...scores);
  }
  const l = result.license;
  const facts: [string, Child][] = [
    ['License', el('code', {}, result.licenseId)],
    ['Confidence', [score(result.confidence),
      el('span', { class: 'meta' }, ' (the watermark reader\'s score: a read needs at least 10, an unmarked image scores about 0)')]],
    ...where,
  ];
  if (l !== null) {
    facts.push(['Licensee', `${l.licensee.name}${l.licensee.email === undefined ? '' : ` <${l.licensee.email}>`} (${l.licensee.accountId})`], ['Issued', timeEl(l.issuedAt)],
      ['State', stateBadge(l)], ['Key releases', String(l.releaseCount)]);
  } else {
    facts.push(['Licensee', 'unknown: this id is not a license of this master']);
  }
  const how = (result.method === 'registered' ? ' It was found by matching the image to the master\'s texture.' : '')
    + (result.match === 'scored' ? SCORES.scored : '');
  return el('div', { class: 'notice success', role: 'status' },
    el('p', {}, el('strong', {}, 'Found. '), `This texture carries a license watermark.${how}`),
    el('dl', { class: 'facts' }, facts.flatMap(([k, v]) => [el('dt', {}, k), el('dd', {}, v)])),
    ...scores);
}

/** The identify form and where its answer shows; `reload` redraws the licenses after a hit. */
export function identifyForm(master: Master, reload: () => Promise<void>): [HTMLFormElement, HTMLElement] {
  const id = `leak-${master.masterId}`;
  const result = el('div', { class: 'result identify-result', 'aria-live': 'polite' });
  const form = el('form', { class: 'inline identify' },
    el('div', { class: 'file' },
      el('label', { for: id }, 'Leaked texture (PNG, JPEG or WebP)'),
      el('input', { id, name: 'image', type: 'file', accept: 'image/png,image/jpeg,image/webp', required: true })),
    el('button', { type: 'submit', class: 'secondary' }, 'Identify'));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const file = field(form, 'image').files?.[0];
    if (file === undefined || !IMAGE_TYPES.has(file.type)) {
      showNotice(result, 'Choose a PNG, JPEG or WebP image.', 'error');
      return;
    }
    showPending(result, `Reading the watermark of ${file.name} (a resized or cropped image is matched to the master's textures, which can take a few seconds)…`);
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

