/**
 * The activity plots (issue 29 items 2 and 4), drawn by uPlot in `seller-activity-plots.ts`,
 * which is loaded only when a plot is first shown (its own chunk). uPlot's style sheet is
 * imported by the pages that show plots (seller.ts, player.ts), so that it is bundled into
 * `/assets/js/<page>.css`, never inline (a lazily loaded chunk's CSS would not be linked).
 *
 * A plot is a picture for people who look: everything it shows is also in a table (the
 * caller's `<details>`), and the canvas is one `role="img"` with a sentence. Plots follow their
 * box's width (a ResizeObserver), so they fit a 360 px screen, and take their colours from the
 * style sheet's variables, so they follow the light and dark schemes. Times on the axis are the
 * browser's local time, in the page's language, through `Intl`.
 */
import { locale } from '../i18n/index.js';
import { el } from './dom.js';
import type { Bucket } from './seller-activity-api.js';

/** Seconds since the epoch of each ISO time (uPlot's time axis). */
export function epochSeconds(times: readonly string[]): number[] {
  return times.map((t) => Date.parse(t) / 1000);
}


/** A bucket's start as the tables and the legend say it. */
export function bucketLabel(iso: string, bucket: Bucket): string {
  return (bucket === 'day' ? dayCell : hourCell).format(new Date(iso));
}
const dayCell = new Intl.DateTimeFormat(locale, { year: 'numeric', month: 'numeric', day: 'numeric' });
const hourCell = new Intl.DateTimeFormat(locale, { month: 'numeric', day: 'numeric', hour: 'numeric', minute: '2-digit' });

/** What the page keeps of a drawn plot (a uPlot instance). */
export interface Plot {
  readonly width: number;
  readonly height: number;
  setSize(size: { width: number; height: number }): void;
}

type Plots = typeof import('./seller-activity-plots.js');
let plots: Promise<Plots> | null = null;

/**
 * uPlot and the plots that use it, loaded the first time a plot is shown: a page whose
 * activity is never opened does not fetch them.
 */
function loadPlots(): Promise<Plots> {
  plots ??= import('./seller-activity-plots.js');
  return plots;
}

/**
 * Draws a plot into `box` once it has a width, and follows that width; `make` gets it. The
 * plot is made only when the box is shown (a closed <details> has no width), after the
 * plotting code has loaded; a box that cannot load it keeps its label, and the table beside it.
 */
function responsive(box: HTMLElement, make: (plots: Plots, width: number) => Plot): void {
  let plot: Plot | null = null;
  let loading = false;
  const observer = new ResizeObserver(() => {
    const width = Math.floor(box.clientWidth);
    if (width <= 0) return;
    if (plot !== null) {
      if (Math.abs(plot.width - width) > 1) plot.setSize({ width, height: plot.height });
      return;
    }
    if (loading) return;
    loading = true;
    loadPlots().then((loaded) => {
      // The width now, which may have changed while the plots loaded.
      const now = Math.floor(box.clientWidth);
      plot = make(loaded, now > 0 ? now : width);
    }, () => {
      // Not loaded (offline, a new deploy): the table beside it says the same; the next resize tries again.
      loading = false;
    });
  });
  observer.observe(box);
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

/** A sparkline of counts per bucket (no axes, no cursor): one of the small multiples. */
export function sparkline(times: readonly string[], counts: readonly number[], label: string): HTMLElement {
  const box = el('div', { class: 'spark', role: 'img', 'aria-label': label });
  responsive(box, (p, width) => p.drawSparkline(box, width, times, counts));
  return box;
}

/** The timeline of one license: counts per bucket as bars and lines, and the release limit. */
export function timelinePlot(times: readonly string[], bucket: Bucket, series: readonly TimelineSeries[], label: string, timeLabel: string):
HTMLElement {
  const box = el('div', { class: 'timeline-plot', role: 'img', 'aria-label': label });
  responsive(box, (p, width) => p.drawTimeline(box, width, times, bucket, series, timeLabel));
  return box;
}
