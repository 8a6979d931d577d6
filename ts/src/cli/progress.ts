/**
 * Progress bars on stderr for long work (bytes done of bytes total), drawn only when stderr
 * is a terminal, redrawn at most every 100 ms, and erased when the work ends so that the
 * command's own output starts on a clean line.
 */
import type { TtyOutput } from './io.js';

/** Shortest time between two redraws, in milliseconds. */
const REDRAW_MS = 100;
/** Work shorter than this shows no bar at all (no flicker for small files). */
const FIRST_DRAW_MS = 250;

const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB'] as const;

/** `1536` → `1.5 KiB`. */
export function formatBytes(bytes: number): string {
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${bytes} B` : `${value.toFixed(1)} ${UNITS[unit]}`;
}

/** A progress bar over `total` bytes. */
export class Progress {
  private done = 0;
  private nextDraw: number;
  private drawn = false;
  private readonly active: boolean;

  constructor(
    private readonly output: TtyOutput | undefined,
    private readonly label: string,
    private readonly total: number,
    private readonly now: () => number = () => Date.now(),
  ) {
    this.active = output?.isTTY === true;
    this.nextDraw = now() + FIRST_DRAW_MS;
  }

  /** Counts `bytes` more as done. */
  add(bytes: number): void {
    this.done += bytes;
    if (!this.active) return;
    const now = this.now();
    if (now < this.nextDraw) return;
    this.nextDraw = now + REDRAW_MS;
    this.draw();
  }

  /** Erases the bar (if one was drawn). */
  finish(): void {
    if (this.drawn) this.output?.write('\r\u001b[K');
    this.drawn = false;
  }

  /** The bar as text, for a terminal `columns` wide. */
  render(columns: number): string {
    const fraction = this.total > 0 ? Math.min(1, this.done / this.total) : 1;
    const tail = ` ${String(Math.floor(fraction * 100)).padStart(3)}% ${formatBytes(this.done)} / ${formatBytes(this.total)}`;
    const width = Math.max(10, Math.min(40, columns - this.label.length - tail.length - 4));
    const filled = Math.round(fraction * width);
    return `${this.label} [${'#'.repeat(filled)}${'-'.repeat(width - filled)}]${tail}`;
  }

  private draw(): void {
    this.output?.write(`\r${this.render(this.output.columns || 80)}\u001b[K`);
    this.drawn = true;
  }
}

/** Passes `source` through, counting its bytes into `progress`. */
export async function* counted(source: AsyncIterable<Uint8Array>, progress: Progress): AsyncGenerator<Uint8Array> {
  for await (const chunk of source) {
    progress.add(chunk.length);
    yield chunk;
  }
}
