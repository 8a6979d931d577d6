/**
 * A bounded memo of a pure function of one string (issue 28 item 1: the key release's per-request
 * work on the client's address, the same few addresses over and over). At most `max` answers are
 * kept; when full, all are forgotten at once, so a client cycling through addresses costs the
 * function's own price and a little memory, never more than `max` entries.
 */
export function memoized<T>(fn: (key: string) => T, max = MEMO_MAX): (key: string) => T {
  const known = new Map<string, T>();
  return (key) => {
    if (known.has(key)) return known.get(key) as T;
    const value = fn(key);
    if (known.size >= max) known.clear();
    known.set(key, value);
    return value;
  };
}

/** Answers a memo keeps by default: a few hundred bytes each. */
export const MEMO_MAX = 4096;
