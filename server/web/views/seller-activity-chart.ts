/**
 * The activity plots (issue 29 items 2 and 4), drawn by uPlot (a small canvas charting library
 * with no eval and no HTML strings, so it runs under the pages' CSP and Trusted Types; it sizes
 * its elements through the CSSOM, which `style-src 'self'` allows, and its own style sheet is
 * bundled by scripts/build-web.mjs into `/assets/js/<page>.css`, never inline).
 *
 * A plot is a picture for people who look: everything it shows is also in a table (the
 * caller's `<details>`), and the canvas is one `role="img"` with a sentence. Plots follow their
 * box's width (a ResizeObserver), so they fit a 360 px screen, and take their colours from the
 * style sheet's variables, so they follow the light and dark schemes. Times on the axis are the
 * browser's local time, in the page's language, through `Intl`.
 */
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { locale } from '../i18n/index.js';
import { el } from './dom.js';
import type { Bucket } from './seller-activity-api.js';

/** A style sheet colour (`--accent` …) as the canvas needs it. */
function colour(name: string, fallback: string): string {
  const value = getComputedStyle(document.documentElement).getPropertyValue(name).trim();
  return value === '' ? fallback : value;
}

/** Seconds since the epoch of each ISO time (uPlot's time axis). */
export function epochSeconds(times: readonly string[]): number[] {
  return times.map((t) => Date.parse(t) / 1000);
}

const numbers = new Intl.NumberFormat(locale);
const dayFormat = new Intl.DateTimeFormat(locale, { month: 'numeric', day: 'numeric' });
const hourFormat = new Intl.DateTimeFormat(locale, { hour: 'numeric', minute: '2-digit' });

/** A bucket's start as the tables and the legend say it. */
export function bucketLabel(iso: string, bucket: Bucket): string {
  return (bucket === 'day' ? dayCell : hourCell).format(new Date(iso));
}
const dayCell = new Intl.DateTimeFormat(locale, { year: 'numeric', month: 'numeric', day: 'numeric' });
const hourCell = new Intl.DateTimeFormat(locale, { month: 'numeric', day: 'numeric', hour: 'numeric', minute: '2-digit' });

/**
 * Draws a plot into `box` once it has a width, and follows that width; `make` gets it. The
 * plot is made only when the box is shown (a closed <details> has no width).
 */
function responsive(box: HTMLElement, make: (width: number) => uPlot): void {
  let plot: uPlot | null = null;
  const observer = new ResizeObserver(() => {
    const width = Math.floor(box.clientWidth);
    if (width <= 0) return;
    if (plot === null) plot = make(width);
    else if (Math.abs(plot.width - width) > 1) plot.setSize({ width, height: plot.height });
  });
  observer.observe(box);
}

/** Only whole numbers on a count axis. */
const COUNT_STEPS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10_000, 20_000, 50_000, 100_000];

/** A sparkline of counts per bucket (no axes, no cursor): one of the small multiples. */
export function sparkline(times: readonly string[], counts: readonly number[], label: string): HTMLElement {
  const box = el('div', { class: 'spark', role: 'img', 'aria-label': label });
  responsive(box, (width) => {
    const accent = colour('--accent', '#2b4c7e');
    return new uPlot({
      width, height: 44, pxAlign: false,
      cursor: { show: false }, select: { show: false, left: 0, top: 0, width: 0, height: 0 }, legend: { show: false },
      padding: [4, 0, 2, 0],
      scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, Math.max(max, 1)] } },
      axes: [{ show: false }, { show: false }],
      series: [{}, { stroke: accent, fill: `${accent}26`, width: 1.5, paths: uPlot.paths.stepped?.({ align: 1 }), points: { show: false } }],
    }, [epochSeconds(times), [...counts]], box);
  });
  return box;
}

/** One line or bar set of a {@link timelinePlot}. */
export interface TimelineSeries {
  label: string;
  values: readonly number[];
  /** A style sheet colour variable and its fallback. */
  colour: [string, string];
  kind: 'bars' | 'line' | 'limit';
  /** For the limit: its label when it lies far above the counts and the plot leaves it out. */
  labelAbove?: string;
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

/** The timeline of one license: counts per bucket as bars and lines, and the release limit. */
export function timelinePlot(times: readonly string[], bucket: Bucket, series: readonly TimelineSeries[], label: string, timeLabel: string):
HTMLElement {
  const box = el('div', { class: 'timeline-plot', role: 'img', 'aria-label': label });
  responsive(box, (width) => {
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
  });
  return box;
}
