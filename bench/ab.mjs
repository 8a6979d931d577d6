// @ts-check
/**
 * Compares two builds of the WASM module (same exports, so pkg/'s glue loads both):
 *   node bench/ab.mjs A.wasm B.wasm --label "what differs" [--repeat 3] [suite options]
 * Runs `suite.mjs --json` for A and B alternately `--repeat` times (default 3) with the
 * given suite options (e.g. --only pipelines --rounds 3), and appends a table of each
 * figure's median over the repeats, and B/A, to bench/VARIANTS.md. Processes alternate so
 * that load from other work on the machine hits both builds alike.
 */
import { execFileSync } from 'node:child_process';
import { appendFileSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fmt, median } from './lib/harness.mjs';

const args = process.argv.slice(2);
const [a, b] = args.splice(0, 2);
const take = (flag, fallback) => {
  const i = args.indexOf(flag);
  if (i < 0) return fallback;
  const [, value] = args.splice(i, 2);
  return value;
};
const label = take('--label', `${a} vs ${b}`);
const repeat = Number(take('--repeat', '3'));
if (!a || !b) throw new Error('usage: ab.mjs A.wasm B.wasm --label TEXT [--repeat N] [suite options]');

const dir = mkdtempSync(join(tmpdir(), 'iki-ab-'));
/** @type {Record<string, Record<string, number[]>>} figure -> build -> values */
const figures = {};
const units = {};
const load = [loadavg()[0].toFixed(2)];
for (let r = 0; r < repeat; r++) {
  for (const [tag, wasm] of [['A', a], ['B', b]]) {
    const out = join(dir, `${tag}${r}.json`);
    execFileSync(process.execPath, [new URL('./suite.mjs', import.meta.url).pathname, ...args, '--json', out],
      { env: { ...process.env, IKI_BENCH_WASM: wasm }, stdio: ['ignore', 'ignore', 'inherit'] });
    const { results } = JSON.parse(readFileSync(out, 'utf8'));
    for (const [kase, data] of Object.entries(results)) {
      for (const [group, rows] of Object.entries(data)) {
        if (!Array.isArray(rows)) continue;
        for (const row of rows) {
          const key = `${kase} / ${group} / ${row.name}`;
          ((figures[key] ??= {})[tag] ??= []).push(row.value);
          units[key] = row.unit;
        }
      }
    }
  }
}
load.push(loadavg()[0].toFixed(2));
const lines = [`## ${label}`, '', `A = \`${a}\`, B = \`${b}\`; ${repeat} alternating runs of \`suite.mjs ${args.join(' ')}\` each, median of the runs' medians; load average (1 min) ${load.join(' -> ')}; ${new Date().toISOString()}.`, '',
  '| figure | unit | A | B | B / A |', '|---|---|---:|---:|---:|'];
for (const [key, v] of Object.entries(figures)) {
  const ma = median(v.A ?? [NaN]);
  const mb = median(v.B ?? [NaN]);
  lines.push(`| ${key} | ${units[key]} | ${fmt(ma)} | ${fmt(mb)} | ${(mb / ma).toFixed(2)} |`);
}
const file = new URL('./VARIANTS.md', import.meta.url);
if (!existsSync(file)) writeFileSync(file, '# Build and code variants of the WASM module, compared with bench/ab.mjs\n\nEach section compares two builds side by side (alternating processes on the same machine and load). For MB/s and ops/s higher is better; for ms lower is better.\n');
appendFileSync(file, `\n${lines.join('\n')}\n`);
process.stdout.write(`${lines.join('\n')}\n`);
