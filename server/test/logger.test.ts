// The logger's batched stderr sink (issue 28 item 1): info lines are written together, in
// order, within LOG_BATCH.delayMs; warnings, errors and links at once with what was held; and
// nothing held is lost when the process exits.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { batchedSink, jsonLogger, LOG_BATCH, type LogSink } from '../src/logger.js';

afterEach(() => { vi.useRealTimers(); });

function capture(batch?: { delayMs: number; maxBytes: number }) {
  const writes: string[] = [];
  return { writes, sink: batchedSink((text) => writes.push(text), batch) };
}

const loggerOn = (sink: LogSink) => jsonLogger(undefined, sink);

describe('batched log sink', () => {
  it('writes info lines together after the delay, in order, and starts no timer while idle', () => {
    vi.useFakeTimers();
    const { writes, sink } = capture();
    expect(vi.getTimerCount()).toBe(0);
    sink.write('a\n');
    sink.write('b\n');
    sink.write('c\n');
    expect(writes).toEqual([]);
    expect(vi.getTimerCount()).toBe(1);
    vi.advanceTimersByTime(LOG_BATCH.delayMs - 1);
    expect(writes).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(writes).toEqual(['a\nb\nc\n']);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('writes a warning at once, after everything held before it', () => {
    vi.useFakeTimers();
    const { writes, sink } = capture();
    sink.write('request 1\n');
    sink.writeNow('warning\n');
    expect(writes).toEqual(['request 1\nwarning\n']);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('writes at once when the held bytes reach the limit, not before', () => {
    vi.useFakeTimers();
    const { writes, sink } = capture({ delayMs: 1000, maxBytes: 10 });
    sink.write('12345');
    sink.write('6789');
    expect(writes).toEqual([]);
    sink.write('0');
    expect(writes).toEqual(['1234567890']);
  });

  it('the logger holds info lines and writes warn, error and link lines at once', () => {
    vi.useFakeTimers();
    const { writes, sink } = capture();
    const logger = loggerOn(sink);
    logger.info('request', { status: 200 });
    expect(writes).toHaveLength(0);
    logger.error('failed', { error: new Error('boom') });
    expect(writes).toHaveLength(1);
    const lines = writes[0]!.trimEnd().split('\n').map((l) => JSON.parse(l) as { level: string; message: string });
    expect(lines.map((l) => [l.level, l.message])).toEqual([['info', 'request'], ['error', 'failed']]);
    logger.link?.('verify', { link: 'x' });
    expect(writes).toHaveLength(2);
  });

  it('writes what it holds when the process exits', () => {
    const built = new URL('../dist/logger.js', import.meta.url);
    expect(existsSync(built), 'make build first: server/dist/logger.js').toBe(true);
    const script = `import { jsonLogger } from ${JSON.stringify(built.href)};
      const log = jsonLogger();
      for (let i = 0; i < 5; i++) log.info('line', { i });
      process.exit(0);`;
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
    expect(run.status).toBe(0);
    const lines = run.stderr.trimEnd().split('\n').map((l) => (JSON.parse(l) as { i: number }).i);
    expect(lines).toEqual([0, 1, 2, 3, 4]);
  });
});
