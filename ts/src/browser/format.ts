/** Sizes and times in the words the pages use (no DOM: also for workers and apps). */

const BYTE_UNITS = ['bytes', 'KiB', 'MiB', 'GiB'] as const;

/** `1536` → `"1.5 KiB"`; below 1 KiB in bytes. */
export function formatBytes(n: number): string {
  let value = n;
  let unit = 0;
  while (value >= 1024 && unit < BYTE_UNITS.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return unit === 0 ? `${n} bytes` : `${value.toFixed(value < 10 ? 1 : 0)} ${BYTE_UNITS[unit]}`;
}

/** An ISO time or milliseconds since the epoch, in the reader's locale; as given when not a time. */
export function formatTime(iso: string | number): string {
  const date = typeof iso === 'number' ? new Date(iso) : new Date(String(iso));
  if (Number.isNaN(date.getTime())) return String(iso);
  return date.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}
