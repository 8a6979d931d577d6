/**
 * One license's timeline (issue 29 items 2 and 4), shared by the seller's page and the buyer's
 * player page: key releases as bars, copy downloads and refusals as lines, the per-license
 * release limit drawn in as a dashed line (what the limit allows per bucket), the limits in a
 * sentence, the flags with their sentences, and every number of the plot in a table under it.
 */
import { formatDateTime, formatNumber, hasMessage, locale, t, type MessageKey } from '../i18n/index.js';
import { dataTable, el, showPending, showProblem, type Child } from './dom.js';
import {
  licenseActivity, PERIODS, REFUSAL_REASONS, refusalTotal, type Bucket, type LicenseActivity, type LicenseFlag, type Period,
  type ReleaseLimit, type SeriesPoint,
} from './seller-activity-api.js';
import { bucketLabel, timelinePlot } from './seller-activity-chart.js';

const BUCKET_SECONDS: Readonly<Record<Bucket, number>> = { hour: 3600, day: 86_400 };

/** A limit's window in words ("1 hour", "30 minutes"). */
export function windowWords(seconds: number): string {
  if (seconds % 86_400 === 0) return t('activity.window.days', { n: seconds / 86_400 });
  if (seconds % 3600 === 0) return t('activity.window.hours', { n: seconds / 3600 });
  if (seconds % 60 === 0) return t('activity.window.minutes', { n: seconds / 60 });
  return t('activity.window.seconds', { n: seconds });
}

/**
 * The most releases the limit lets through in one bucket: the count per window times the
 * windows a bucket holds, and never less than the count (a window longer than the bucket can
 * still spend all of it in one bucket).
 */
export function limitPerBucket(limit: ReleaseLimit, bucket: Bucket): number {
  return limit.count * Math.max(1, Math.floor(BUCKET_SECONDS[bucket] / Math.max(1, limit.windowSeconds)));
}

/** Why a flag was raised, in a sentence. */
export function flagSentence(flag: LicenseFlag): string {
  const key = `activity.flag.${flag.rule}`;
  // `scripted` measures the variation of the intervals (a fraction); the other rules count.
  const fraction = (n: number) => new Intl.NumberFormat(locale, { maximumFractionDigits: 2 }).format(n);
  return t(hasMessage(key) ? key : 'activity.flag.other', {
    value: flag.rule === 'scripted' ? fraction(flag.value) : flag.value,
    threshold: flag.rule === 'scripted' ? fraction(flag.threshold) : formatNumber(flag.threshold),
    start: formatDateTime(flag.windowStart), end: formatDateTime(flag.windowEnd),
  });
}

/** The period chooser of the activity views. */
export function periodSelect(id: string, current: Period, onChange: (period: Period) => void): HTMLElement {
  const select = el('select', { id, onchange: () => onChange(select.value as Period) },
    (Object.keys(PERIODS) as Period[]).map((p) => el('option', { value: p, selected: p === current }, t(`activity.range.${p}` as MessageKey))));
  return el('div', { class: 'period' }, el('label', { for: id }, t('activity.range')), select);
}

function refusalCell(point: SeriesPoint): Child {
  const total = refusalTotal(point);
  const parts = REFUSAL_REASONS.filter((r) => (point.refusals[r] ?? 0) > 0)
    .map((r) => t('activity.refusalsDetail', { reason: t(`activity.refusal.${r}`), n: formatNumber(point.refusals[r]) }));
  return [formatNumber(total), parts.length === 0 ? null : el('div', { class: 'meta reasons' }, parts.join(', '))];
}

/** The table behind the timeline: one row per bucket. */
function seriesTable(activity: LicenseActivity): HTMLElement {
  return dataTable({
    id: `timeline-table-${activity.licenseId}`,
    caption: t('activity.bucketsCaption', { bucket: activity.bucket, tz: activity.timeZone }),
    columns: [{ label: t('activity.col.start') }, { label: t('activity.col.releases'), num: true }, { label: t('activity.col.downloads'), num: true },
      { label: t('activity.col.resumes'), num: true }, { label: t('activity.col.refusals'), num: true },
      { label: t('activity.col.addresses'), num: true }, { label: t('activity.col.devices'), num: true }],
    rows: activity.series.map((p) => ({ dataset: { start: p.start }, cells: [
      el('time', { datetime: p.start }, bucketLabel(p.start, activity.bucket)), formatNumber(p.releases), formatNumber(p.downloads),
      formatNumber(p.resumes), refusalCell(p), formatNumber(p.addresses), formatNumber(p.devices)] })),
  });
}

/** The flags of a license, each with its sentence and when it was raised (or dismissed). */
export function flagItems(flags: readonly LicenseFlag[]): HTMLElement | null {
  if (flags.length === 0) return null;
  return el('ul', { class: 'flags' }, flags.map((f) => el('li', { class: `flag ${f.state}`, dataset: { flagId: f.id } },
    el('p', {}, flagSentence(f)),
    el('p', { class: 'meta' }, t('activity.flags.raised', { when: formatDateTime(f.raisedAt) }),
      f.state === 'dismissed' && f.dismissedAt !== null ? ` · ${t('activity.flags.dismissedAt', { when: formatDateTime(f.dismissedAt) })}` : ''))));
}

/** The plot, its limits sentence, its table and its flags. */
function timelineBody(activity: LicenseActivity): Child[] {
  const { perLicense, perAccount } = activity.limits;
  const limit = limitPerBucket(perLicense, activity.bucket);
  const times = activity.series.map((p) => p.start);
  const plot = timelinePlot(times, activity.bucket, [
    { label: t('activity.col.releases'), values: activity.series.map((p) => p.releases), colour: ['--accent', '#2b4c7e'], kind: 'bars' },
    { label: t('activity.col.downloads'), values: activity.series.map((p) => p.downloads), colour: ['--ok', '#116329'], kind: 'line' },
    { label: t('activity.col.refusals'), values: activity.series.map(refusalTotal), colour: ['--danger', '#a40e26'], kind: 'line' },
    { label: t('activity.limitSeries'), values: times.map(() => limit), colour: ['--warn', '#7d4e00'], kind: 'limit',
      labelAbove: t('activity.limitAbove', { n: limit, bucket: activity.bucket }) },
  ], t('activity.timelineFigure', { license: activity.licenseId }), t('activity.col.start'));
  return [
    el('p', { class: 'meta limit' }, t('activity.limit', {
      count: perLicense.count, window: windowWords(perLicense.windowSeconds),
      accountCount: formatNumber(perAccount.count), accountWindow: windowWords(perAccount.windowSeconds) })),
    el('div', { class: 'activity-figure' }, plot,
      el('details', { class: 'numbers' }, el('summary', {}, t('activity.numbersOf', { license: activity.licenseId })), seriesTable(activity))),
    flagItems(activity.flags),
  ];
}

/** What {@link licenseTimeline} shows above the plot. */
export interface TimelineOptions {
  licenseId: string;
  period?: Period;
  /** A sentence under the heading (the buyer's page says what this is). */
  lead?: string;
  /** Offers a close button that calls it. */
  onClose?: () => void;
}

/** A section with one license's timeline, loaded now and again when the period changes. */
export function licenseTimeline(options: TimelineOptions): HTMLElement {
  const { licenseId } = options;
  const content = el('div', { class: 'timeline-content', 'aria-live': 'polite' });
  const load = async (period: Period) => {
    showPending(content, t('activity.loading'));
    try {
      content.replaceChildren(...timelineBody(await licenseActivity(licenseId, period)).filter((c): c is Node => c instanceof Node));
    } catch (err) {
      showProblem(content, err);
    }
  };
  const heading = el('h3', { id: `timeline-title-${licenseId}`, tabindex: -1 }, t('activity.timelineOf', { license: licenseId }));
  const section = el('section', { class: 'timeline', 'aria-labelledby': heading.id, dataset: { licenseId } },
    el('div', { class: 'timeline-head' }, heading,
      options.onClose === undefined ? null : el('button', { type: 'button', class: 'secondary small', onclick: options.onClose }, t('activity.closeTimeline'))),
    options.lead === undefined ? null : el('p', { class: 'meta' }, options.lead),
    periodSelect(`timeline-period-${licenseId}`, options.period ?? 'month', (p) => void load(p)),
    content);
  void load(options.period ?? 'month');
  return section;
}
