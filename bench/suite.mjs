// @ts-check
/**
 * make bench: runs every case side by side in this one process and writes its block of
 * bench/RESULTS.md (between `<!-- bench-suite:start -->` and `<!-- bench-suite:end -->`; the
 * rest of the file, other benches' results, is kept) and bench/out/results.json. Each row
 * carries its CPU time per call, and the previous run's figures beside it (bench/lib/previous.mjs).
 * Usage:
 *   node bench/suite.mjs [--quick] [--rounds N] [--only aead,sha256,...] [--json FILE]
 * (--json: write the figures to FILE instead of RESULTS.md; bench/ab.mjs uses it. --only:
 * the other cases' sections stay as the previous run wrote them.)
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { environment, parseOptions } from './lib/harness.mjs';
import { joinResults, nextBlock, splitResults } from './lib/previous.mjs';

const CASES = ['aead', 'sha256', 'deflate', 'argon2', 'curves', 'watermark', 'pipelines'];

const argv = process.argv.slice(2);
const jsonAt = argv.indexOf('--json');
const jsonOut = jsonAt < 0 ? undefined : argv.splice(jsonAt, 2)[1];
const options = parseOptions(argv);
const env = environment();
const selected = options.only.length > 0 ? CASES.filter((c) => options.only.includes(c)) : CASES;
const results = {};
const sections = [];
const started = performance.now();
for (const name of selected) {
  process.stderr.write(`bench: ${name} (load ${loadavg().map((l) => l.toFixed(2)).join(' ')})\n`);
  const t = performance.now();
  const module = await import(`./cases/${name}.mjs`);
  const result = await module.run(options);
  results[name] = { ...result.data, seconds: (performance.now() - t) / 1000 };
  sections.push(result.md);
}
const endLoad = loadavg().map((l) => l.toFixed(2)).join(' ');
const seconds = ((performance.now() - started) / 1000).toFixed(0);
const { wasmBytes, wasmFile } = await import('./lib/iki.mjs');
if (jsonOut !== undefined) {
  // bench/ab.mjs: figures only, RESULTS.md untouched.
  writeFileSync(jsonOut, `${JSON.stringify({ env, endLoad, options, results })}\n`);
  process.exit(0);
}

const rerun = selected.length < CASES.length ? ` Only ${selected.join(', ')} ran in this run; the other sections are the previous run's.` : '';
const head = [
  '# iki benchmark results',
  '',
  `Written by \`make bench\` (bench/run.sh${options.quick ? ' --quick' : ''}) on ${env.date} in ${seconds} s. Every figure is the median of ${options.rounds} rounds; in each round every implementation of a case runs side by side for at least ${options.minMs} ms, in an order that rotates between rounds. **Compare ratios within this file, not absolute values across runs**: the machine is shared with other builds, and its load changes the absolute figures from run to run. "CPU ms/call" is the process's CPU time (user + system, all threads; a child process's own where a row runs in one) per call, the median over the rounds: a cost that depends far less on the load than a rate. The last three columns of each table are the previous run's figure for the same row, now / previous, and the previous run's CPU per call ("-" where that run did not have the row or the column); the previous run's whole text is kept at the end of this block.${rerun}`,
  '',
  '| | |',
  '|---|---|',
  `| CPU | ${env.cpu}, ${env.cores} cores, ${env.memoryGiB} GiB |`,
  `| load average (1, 5, 15 min) | at start ${env.loadAverage}; at end ${endLoad} |`,
  `| Node | ${env.node} (V8 ${env.v8}, OpenSSL ${env.openssl}, zlib ${env.zlib}) |`,
  `| WASM compiler | ${env.rustcWasm} (wasm32-unknown-unknown, +simd128, opt-level 3, LTO, 1 codegen unit) |`,
  `| wasm-opt / wasm-bindgen | ${env.wasmOpt} / ${env.wasmBindgen} |`,
  `| ${wasmFile} | ${wasmBytes} bytes |`,
  `| iki commit | ${env.commit}${env.dirty ? ' (with uncommitted changes to crates/ or scripts/)' : ''} |`,
  `| peers | ${Object.entries(env.peers).map(([k, v]) => `${k} ${v}`).join(', ')} |`,
].join('\n');
mkdirSync(new URL('./out/', import.meta.url), { recursive: true });
writeFileSync(new URL('./out/results.json', import.meta.url), `${JSON.stringify({ env, endLoad, options, results }, null, 2)}\n`);
// Only make bench's block is rewritten: every other bench's results in the file stay.
const resultsUrl = new URL('./RESULTS.md', import.meta.url);
const previous = existsSync(resultsUrl) ? readFileSync(resultsUrl, 'utf8') : '';
const oldBlock = splitResults(previous).block;
const oldDate = /on (\d{4}-\d\d-\d\dT[0-9:.]+Z)/u.exec(oldBlock)?.[1] ?? 'an earlier date';
const oldCommit = /\| iki commit \| ([0-9a-f]+)/u.exec(oldBlock)?.[1] ?? 'unknown';
const block = nextBlock(oldBlock, head, sections, `The previous run of make bench (${oldDate}, iki ${oldCommit}), as it was written`);
writeFileSync(resultsUrl, joinResults(previous, block));
process.stderr.write(`bench: wrote make bench's block of bench/RESULTS.md in ${seconds} s\n`);
