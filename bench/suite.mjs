// @ts-check
/**
 * make bench: runs every case side by side in this one process and writes
 * bench/RESULTS.md (and bench/out/results.json). Usage:
 *   node bench/suite.mjs [--quick] [--rounds N] [--only aead,sha256,...] [--json FILE]
 * (--json: write the figures to FILE instead of RESULTS.md; bench/ab.mjs uses it.)
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { environment, parseOptions } from './lib/harness.mjs';

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

const head = [
  '# iki benchmark results',
  '',
  `Written by \`make bench\` (bench/run.sh${options.quick ? ' --quick' : ''}) on ${env.date} in ${seconds} s. Every figure is the median of ${options.rounds} rounds; in each round every implementation of a case runs side by side for at least ${options.minMs} ms, in an order that rotates between rounds. **Compare ratios within this file, not absolute values across runs**: the machine is shared with other builds, and its load changes the absolute figures from run to run.`,
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
  '',
];
mkdirSync(new URL('./out/', import.meta.url), { recursive: true });
writeFileSync(new URL('./out/results.json', import.meta.url), `${JSON.stringify({ env, endLoad, options, results }, null, 2)}\n`);
// make bench-project writes its own section between these markers; a new run keeps it.
const previous = existsSync(new URL('./RESULTS.md', import.meta.url)) ? readFileSync(new URL('./RESULTS.md', import.meta.url), 'utf8') : '';
const kept = /<!-- bench-project:start -->[\s\S]*<!-- bench-project:end -->/u.exec(previous)?.[0];
writeFileSync(new URL('./RESULTS.md', import.meta.url), `${head.join('\n')}\n${sections.join('\n\n')}\n${kept === undefined ? '' : `\n${kept}\n`}`);
process.stderr.write(`bench: wrote bench/RESULTS.md in ${seconds} s\n`);
