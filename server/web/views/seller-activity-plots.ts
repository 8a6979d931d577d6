/**
 * The activity plots drawn by uPlot, loaded by `seller-activity-chart.ts` the first time a plot
 * is shown (esbuild puts this module and uPlot in their own chunk). uPlot has no eval and no
 * HTML strings, so it runs under the pages' CSP and Trusted Types; it sizes its elements
 * through the CSSOM, which `style-src 'self'` allows.
 */
import uPlot from 'uplot';
import { locale } from '../i18n/index.js';
import type { Bucket } from './seller-activity-api.js';
import { bucketLabel, epochSeconds, type Plot, type TimelineSeries } from './seller-activity-chart.js';

/** A style sheet colour (`--accent` …) as the canvas needs it. */
function colour(name: string, fallback: string): string {
  const value = getComputedStyle(document.documentElement).getPropertyValue(name).trim();
  return value === '' ? fallback : value;
}

const numbers = new Intl.NumberFormat(locale);
const dayFormat = new Intl.DateTimeFormat(locale, { month: 'numeric', day: 'numeric' });
const hourFormat = new Intl.DateTimeFormat(locale, { hour: 'numeric', minute: '2-digit' });

/** Only whole numbers on a count axis. */
const COUNT_STEPS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10_000, 20_000, 50_000, 100_000];

/** A sparkline of counts per bucket (no axes, no cursor) in `box`, `width` wide. */
export function drawSparkline(box: HTMLElement, width: number, times: readonly string[], counts: readonly number[]): Plot {
  const accent = colour('--accent', '#2b4c7e');
  return new uPlot({
    width, height: 44, pxAlign: false,
    cursor: { show: false }, select: { show: false, left: 0, top: 0, width: 0, height: 0 }, legend: { show: false },
    padding: [4, 0, 2, 0],
    scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, Math.max(max, 1)] } },
    axes: [{ show: false }, { show: false }],
    series: [{}, { stroke: accent, fill: `${accent}26`, width: 1.5, paths: uPlot.paths.stepped?.({ align: 1 }), points: { show: false } }],
  }, [epochSeconds(times), [...counts]], box);
}

/**
 * The top of the count axis: the highest count, and the limit too when it is near enough to
 * be compared; a limit far above the counts would flatten them to nothing, so it is then left
 * out of the plot (and its legend says so).
 */
function axisTop(series: readonly TimelineSeries[]): { top: number; limitShown: boolean } {
  const counts = Math.max(1, ...series.filter((s) => s.kind !== 'limit').flatMap((s) => s.values));
  const limit = Math.max(0, ...series.filter((s) => s.kind === 'limit').flatMap((s) => s.values));
  const limitShown = limit <= counts * 5;
  return { top: Math.ceil((limitShown ? Math.max(counts, limit) : counts) * 1.1), limitShown };
}

/** The x axis: days or hours in the page's language. */
function timeAxis(stroke: string, grid: string): uPlot.Axis {
  return {
    stroke, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid, width: 1 }, space: 56,
    values: (_u, splits, _axis, _space, increment) => splits.map((s) =>
      (increment >= 86_400 ? dayFormat : hourFormat).format(new Date(s * 1000))),
  };
}

/** The timeline of one license in `box`, `width` wide: counts per bucket as bars and lines, and the release limit. */
export function drawTimeline(box: HTMLElement, width: number, times: readonly string[], bucket: Bucket,
  series: readonly TimelineSeries[], timeLabel: string): Plot {
  const text = colour('--muted', '#57606a');
  const grid = colour('--line', '#d0d7de');
  const { top, limitShown } = axisTop(series);
  const bars = uPlot.paths.bars?.({ size: [0.7, 24], align: 0 });
  return new uPlot({
    width, height: width < 480 ? 200 : 260,
    // The legend names the series; the numbers are in the table under the plot (a hover shows them too).
    legend: { live: false }, cursor: { drag: { x: false, y: false } }, select: { show: false, left: 0, top: 0, width: 0, height: 0 },
    scales: { x: { time: true }, y: { range: () => [0, top] } },
    axes: [timeAxis(text, grid), {
      stroke: text, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid, width: 1 }, incrs: COUNT_STEPS, size: 44,
      values: (_u, splits) => splits.map((s) => numbers.format(s)),
    }],
    series: [
      { label: timeLabel, value: (_u, v) => (v === null ? '–' : bucketLabel(new Date(v * 1000).toISOString(), bucket)) },
      ...series.map((s): uPlot.Series => {
        const stroke = colour(...s.colour);
        return {
          label: s.kind === 'limit' && !limitShown ? s.labelAbove ?? s.label : s.label, stroke, width: s.kind === 'bars' ? 1 : 2,
          points: { show: false },
          ...(s.kind === 'bars' ? { fill: `${stroke}99`, paths: bars } : {}),
          ...(s.kind === 'limit' ? { dash: [6, 4] } : {}),
          value: (_u, v) => (v === null ? '–' : numbers.format(v)),
        };
      }),
    ],
  }, [epochSeconds(times), ...series.map((s) => [...s.values])], box);
}
