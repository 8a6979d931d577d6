// @ts-check
/**
 * make bench's own block of bench/RESULTS.md, and the previous run beside the new one.
 *
 * bench/RESULTS.md holds many benches' results: `make bench` owns only the text between
 * `<!-- bench-suite:start -->` and `<!-- bench-suite:end -->` and leaves the rest of the file
 * as it was (a file without the markers gets the block on top, with nothing removed).
 *
 * Old and new side by side (issue 28): every table row of the new run gets the previous
 * run's figure for the same section, group and implementation, and now / previous; the
 * previous run's whole text (hand-written notes included) is kept below the new one in a
 * `<details>` element, one run deep (older runs are in git's history).
 */

export const START = '<!-- bench-suite:start -->';
export const END = '<!-- bench-suite:end -->';
const DETAILS = '<details>';

/**
 * Splits RESULTS.md into what precedes make bench's block, the block's text, and what follows.
 * @param {string} text
 */
export function splitResults(text) {
  const start = text.indexOf(START);
  const end = text.indexOf(END);
  if (start < 0 || end < start) return { before: '', block: '', after: text };
  return {
    before: text.slice(0, start),
    block: text.slice(start + START.length, end).replace(/^\n+|\n+$/gu, ''),
    after: text.slice(end + END.length),
  };
}

/**
 * The file with `block` as make bench's block, everything else unchanged.
 * @param {string} text
 * @param {string} block
 */
export function joinResults(text, block) {
  const { before, after } = splitResults(text);
  const rest = text.includes(START) ? after : `\n\n${text}`;
  return `${before}${START}\n${block}\n${END}${rest.length > 0 && !rest.startsWith('\n') ? '\n' : ''}${rest}`;
}

/** The block's own run: its text without the previous run kept in `<details>`. */
export function ownRun(block) {
  const at = block.indexOf(`\n${DETAILS}`);
  return (at < 0 ? block : block.slice(0, at)).replace(/\n+$/u, '');
}

/**
 * The block's sections by their `## ` heading (the head before the first is under '').
 * @param {string} run
 * @returns {Map<string, string>}
 */
export function sections(run) {
  const map = new Map();
  let heading = '';
  let lines = [];
  for (const line of run.split('\n')) {
    if (line.startsWith('## ')) {
      map.set(heading, lines.join('\n').replace(/\n+$/u, ''));
      heading = line.slice(3).trim();
      lines = [];
    }
    lines.push(line);
  }
  map.set(heading, lines.join('\n').replace(/\n+$/u, ''));
  return map;
}

const cellsOf = (line) => line.split('|').slice(1, -1).map((c) => c.trim());
const isSeparator = (line) => /^\|(\s*-{3,}:?\s*\|)+\s*$/u.test(line);

/**
 * Every table row of a run, keyed by section, bold group label and first cell.
 * @param {string} run
 * @returns {Map<string, {header: string[], cells: string[]}>}
 */
export function tableRows(run) {
  const rows = new Map();
  walkTables(run, (key, header, cells) => { rows.set(key, { header, cells }); });
  return rows;
}

/**
 * Calls `onRow` for each data row of each table with its key, and returns the text with each
 * line replaced by what `edit` returns for it (the line itself when it returns undefined).
 * @param {string} run
 * @param {(key: string, header: string[], cells: string[]) => void} onRow
 * @param {(line: string, kind: 'header' | 'separator' | 'row', key: string, header: string[]) => string | undefined} [edit]
 */
function walkTables(run, onRow, edit) {
  let section = '';
  let group = '';
  /** @type {string[] | null} */
  let header = null;
  const lines = run.split('\n');
  const out = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    let replaced;
    if (line.startsWith('## ')) {
      section = line.slice(3).trim();
      group = '';
    } else if (/^\*\*[^*]+\*\*/u.test(line)) {
      group = /^\*\*([^*]+)\*\*/u.exec(line)?.[1] ?? '';
    } else if (!line.startsWith('|')) {
      header = null;
    } else if (header === null) {
      if (isSeparator(lines[i + 1] ?? '')) {
        header = cellsOf(line);
        replaced = edit?.(line, 'header', '', header);
      }
    } else if (isSeparator(line)) {
      replaced = edit?.(line, 'separator', '', header);
    } else {
      const cells = cellsOf(line);
      const key = `${section}\u0000${group}\u0000${cells[0]}`;
      onRow(key, header, cells);
      replaced = edit?.(line, 'row', key, header);
    }
    out.push(replaced ?? line);
  }
  return out.join('\n');
}

/** The leading number of a cell ("219 MP/s (76.6 ms)" -> 219), NaN when there is none. */
const numberOf = (cell) => {
  const m = /^\*{0,2}(-?[0-9]+(?:\.[0-9]+)?(?:e-?[0-9]+)?)/u.exec(cell ?? '');
  return m ? Number(m[1]) : Number.NaN;
};

/**
 * `run` with three columns added to every table: the previous run's figure for the same row
 * (the table's second column), now / previous of that figure (above 1 is faster for MB/s and
 * ops/s, slower for ms), and the previous run's CPU ms per call where it had one.
 * @param {string} run
 * @param {Map<string, {header: string[], cells: string[]}>} previous
 */
export function besidePrevious(run, previous) {
  const cpuAt = (header) => header.findIndex((h) => h.startsWith('CPU ms'));
  return walkTables(run, () => {}, (line, kind, key, header) => {
    if (kind === 'header') return `${line} previous run | now / previous | previous CPU |`;
    if (kind === 'separator') return `${line}---:|---:|---:|`;
    const cells = cellsOf(line);
    const before = previous.get(key);
    if (before === undefined) return `${line} - | - | - |`;
    const sameUnit = before.header[1] === header[1];
    const ratio = numberOf(cells[1]) / numberOf(before.cells[1]);
    const oldCpu = cpuAt(before.header) < 0 ? '-' : before.cells[cpuAt(before.header)] ?? '-';
    return `${line} ${before.cells[1]} | ${sameUnit && Number.isFinite(ratio) ? ratio.toFixed(2) : '-'} | ${oldCpu} |`;
  });
}

/**
 * The new block: `head`, then each section of `fresh` beside the previous run's figures, in the
 * previous run's order with new sections after; sections this run did not produce (`--only`)
 * are kept as they were; then the previous run's own text in `<details>`.
 * @param {string} oldBlock
 * @param {string} head
 * @param {string[]} fresh sections of this run, each starting with its `## ` heading
 * @param {string} previousLabel what the summary of the kept previous run says
 */
export function nextBlock(oldBlock, head, fresh, previousLabel) {
  const oldRun = ownRun(oldBlock);
  const oldSections = sections(oldRun);
  const rows = tableRows(oldRun);
  const freshByHeading = new Map(fresh.map((md) => [md.split('\n', 1)[0].replace(/^## /u, '').trim(), md]));
  const out = [head];
  const done = new Set();
  for (const heading of oldSections.keys()) {
    if (heading === '') continue;
    const md = freshByHeading.get(heading);
    out.push(md === undefined ? (oldSections.get(heading) ?? '') : besidePrevious(md, rows));
    done.add(heading);
  }
  for (const [heading, md] of freshByHeading) if (!done.has(heading)) out.push(besidePrevious(md, rows));
  const kept = oldRun.length > 0
    ? ['', DETAILS, `<summary>${previousLabel}</summary>`, '', oldRun, '', '</details>']
    : [];
  return [out.join('\n\n'), ...kept].join('\n');
}
