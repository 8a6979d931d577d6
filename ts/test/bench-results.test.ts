// make bench's writer of bench/RESULTS.md (bench/lib/previous.mjs): it rewrites only its own
// block, keeps every other bench's results and the previous run's text, and puts the previous
// run's figures beside the new ones.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { END, START, joinResults, nextBlock, splitResults } from '../../bench/lib/previous.mjs';

const table = (rows: [string, string, string][]) => [
  '| implementation | MB/s (median) | ratio to iki | CPU ms/call | rounds min-max ms/call | note |',
  '|---|---:|---:|---:|---|---|',
  ...rows.map(([name, value, cpu]) => `| ${name} | ${value} | 1.00 | ${cpu} | 1-2 |  |`),
].join('\n');

const OLD_RUN = [
  '# iki benchmark results',
  '',
  'Written by `make bench` on 2026-11-01T00:00:00.000Z.',
  '',
  '## Chunk AEAD',
  '',
  '**Seal**',
  '',
  '| implementation | MB/s (median) | ratio to iki | rounds min-max ms/call | note |',
  '|---|---:|---:|---|---|',
  '| iki (WASM) | 700 | 1.00 | 1.40-1.51 |  |',
  '| node:crypto | 1400 | 2.00 | 0.70-0.79 |  |',
  '',
  'A note written by hand.',
  '',
  '## Watermark',
  '',
  '| operation | median | rounds min-max ms/call |',
  '|---|---:|---|',
  '| embed | 200 MP/s (80 ms) | 75-85 |',
].join('\n');

const FILE = `${START}\n${OLD_RUN}\n${END}\n\n## Key releases (make bench-load)\n\nhand-written rows\n`;

describe("make bench's block of bench/RESULTS.md", () => {
  it('replaces only its own block and keeps every other section', () => {
    const fresh = ['## Chunk AEAD\n\n**Seal**\n\n' + table([['iki (WASM)', '1050', '1.02']])];
    const block = nextBlock(splitResults(FILE).block, '# iki benchmark results\n\nnew head', fresh, 'previous');
    const out = joinResults(FILE, block);
    expect(out).toContain('## Key releases (make bench-load)\n\nhand-written rows\n');
    expect(out.indexOf(START)).toBe(0);
    expect(out.split(START)).toHaveLength(2);
    expect(out.split(END)).toHaveLength(2);
    // The section this run did not produce (as with --only) stays as the previous run wrote it.
    expect(splitResults(out).block.split('<details>')[0]).toContain('| embed | 200 MP/s (80 ms) | 75-85 |');
  });

  it('puts the previous figure, now / previous and the previous CPU beside each row', () => {
    const fresh = ['## Chunk AEAD\n\n**Seal**\n\n' + table([['iki (WASM)', '1050', '1.02'], ['new peer', '10', '90']])];
    const block = nextBlock(OLD_RUN, 'head', fresh, 'previous');
    const own = block.split('<details>')[0];
    expect(own).toContain('| CPU ms/call | rounds min-max ms/call | note | previous run | now / previous | previous CPU |');
    expect(own).toContain('| iki (WASM) | 1050 | 1.00 | 1.02 | 1-2 |  | 700 | 1.50 | - |');
    expect(own).toContain('| new peer | 10 | 1.00 | 90 | 1-2 |  | - | - | - |');
    // The rows are matched by section and group: a row of another group gets no figure.
    const other = nextBlock(OLD_RUN, 'head', ['## Chunk AEAD\n\n**Open**\n\n' + table([['iki (WASM)', '9', '1']])], 'p');
    expect(other).toContain('| iki (WASM) | 9 | 1.00 | 1 | 1-2 |  | - | - | - |');
  });

  it('keeps the previous run whole in <details>, one run deep', () => {
    const fresh = ['## Chunk AEAD\n\n**Seal**\n\n' + table([['iki (WASM)', '1050', '1.02']])];
    const second = nextBlock(OLD_RUN, 'head two', fresh, 'run one');
    expect(second).toContain('<summary>run one</summary>');
    expect(second).toContain('A note written by hand.');
    const third = nextBlock(second, 'head three', [String(fresh[0]).replace('1050', '1100')], 'run two');
    expect(third).toContain('<summary>run two</summary>');
    expect(third).not.toContain('run one');
    expect(third).not.toContain('A note written by hand.');
    // The figure beside the third run is the second run's, not the first's.
    expect(third.split('<details>')[0]).toContain('| iki (WASM) | 1100 | 1.00 | 1.02 | 1-2 |  | 1050 | 1.05 | 1.02 |');
  });

  it('adds its block on top of a file without the markers, removing nothing', () => {
    const legacy = '# Some results\n\n## Durability\n\nrows\n';
    const out = joinResults(legacy, nextBlock('', 'head', ['## AEAD\n\n' + table([['iki', '1', '1']])], 'p'));
    expect(out.startsWith(`${START}\nhead`)).toBe(true);
    expect(out.endsWith(legacy)).toBe(true);
    expect(out).not.toContain('<details>');
  });

  it("the repository's RESULTS.md has the block once, at the top", () => {
    const text = readFileSync(new URL('../../bench/RESULTS.md', import.meta.url), 'utf8');
    expect(text.startsWith(START)).toBe(true);
    expect(text.split(START)).toHaveLength(2);
    expect(text.split(END)).toHaveLength(2);
    expect(splitResults(text).after).toContain('<!-- bench-load:start -->');
  });
});
