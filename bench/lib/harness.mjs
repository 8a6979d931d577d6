// @ts-check
/**
 * Timing for make bench: every figure is a median of N rounds, and within a round every
 * implementation of a case runs once, side by side, in an order that rotates from round to
 * round, so that load from other processes (this machine is shared) hits all of them alike.
 * Figures are compared as ratios inside one run; absolute values are only what this machine
 * did at that moment. Beside the wall time, every row carries the CPU time the process (all
 * its threads) spent per call, from `process.cpuUsage()`: a cost that depends far less on what
 * else the shared machine runs than a rate does (issue 28).
 */
import { execFileSync } from 'node:child_process';
import { cpus, loadavg, totalmem } from 'node:os';
import { readFileSync } from 'node:fs';

/** Options from the command line: --quick shortens everything, --rounds N, --only a,b. */
export function parseOptions(argv) {
  const options = { quick: false, rounds: 0, only: /** @type {string[]} */ ([]), minMs: 0 };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--quick') options.quick = true;
    else if (arg === '--rounds') options.rounds = Number(argv[++i]);
    else if (arg === '--only') options.only = String(argv[++i]).split(',');
    else throw new Error(`unknown argument ${arg} (use --quick, --rounds N, --only case,case)`);
  }
  if (options.rounds === 0) options.rounds = options.quick ? 3 : 7;
  options.minMs = options.quick ? 150 : 400;
  return options;
}

/** Calls `fn` until at least `minMs` passed (at least `minCalls` times); ms per call. */
export function timeCalls(fn, minMs, minCalls = 1) {
  let calls = 0;
  const start = performance.now();
  let elapsed = 0;
  do {
    fn();
    calls += 1;
    elapsed = performance.now() - start;
  } while (elapsed < minMs || calls < minCalls);
  return elapsed / calls;
}

/** The same for an async `fn`. */
export async function timeCallsAsync(fn, minMs, minCalls = 1) {
  return (await measureCallsAsync(fn, minMs, minCalls)).ms;
}

/**
 * Calls the async `fn` until at least `minMs` passed (at least `minCalls` times): wall ms per
 * call, and CPU ms per call of this process (user + system, every thread) plus what
 * `extraCpuUs()` reports (for work done in another process, such as a child's CPU time).
 *
 * @param {() => unknown} fn
 * @param {number} minMs
 * @param {number} [minCalls]
 * @param {() => number} [extraCpuUs] cumulative CPU microseconds spent elsewhere for `fn`
 */
export async function measureCallsAsync(fn, minMs, minCalls = 1, extraCpuUs) {
  let calls = 0;
  const extra0 = extraCpuUs?.() ?? 0;
  const cpu0 = process.cpuUsage();
  const start = performance.now();
  let elapsed = 0;
  do {
    await fn();
    calls += 1;
    elapsed = performance.now() - start;
  } while (elapsed < minMs || calls < minCalls);
  const cpu = process.cpuUsage(cpu0);
  const extra = (extraCpuUs?.() ?? 0) - extra0;
  return { ms: elapsed / calls, cpuMs: (cpu.user + cpu.system + extra) / 1000 / calls };
}

/**
 * User + system CPU microseconds of process `pid` so far, from /proc (Linux; clock ticks, so
 * 10 ms steps at the usual 100 Hz: read it over windows of hundreds of ms). NaN elsewhere.
 */
export function processCpuUs(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // After the command: state is field 3, utime field 14, stime field 15 (proc(5)).
    return ((Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS) * 1e6;
  } catch {
    return Number.NaN;
  }
}

/** USER_HZ: 100 on every Linux build Node runs on (getconf CLK_TCK). */
const CLOCK_TICKS = 100;

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/**
 * Runs every implementation `rounds` times, interleaved, and returns one row per
 * implementation with the median ms per call, the median CPU ms per call (`cpuMs`, see
 * `measureCallsAsync`) and the figure in `unit`:
 * - `MB/s`: `bytes` (decoded bytes per call) / time, MB = 10^6 bytes;
 * - `ops/s`: calls per second;
 * - `ms`: ms per call.
 * Each implementation runs its `check` once before timing (an output check that throws).
 *
 * @param {{name: string, run: () => unknown, check?: () => unknown | Promise<unknown>, note?: string, extraCpuUs?: () => number}[]} impls
 * @param {{rounds: number, minMs: number, unit: 'MB/s' | 'ops/s' | 'ms', bytes?: number, minCalls?: number}} how
 */
export async function compare(impls, how) {
  for (const impl of impls) {
    if (impl.check) await impl.check();
    await impl.run(); // warm-up (JIT, WASM tier-up, allocations)
  }
  /** @type {number[][]} */
  const samples = impls.map(() => []);
  /** @type {number[][]} */
  const cpuSamples = impls.map(() => []);
  for (let round = 0; round < how.rounds; round++) {
    for (let k = 0; k < impls.length; k++) {
      const i = (k + round) % impls.length;
      const impl = impls[i];
      const { ms, cpuMs } = await measureCallsAsync(impl.run, how.minMs, how.minCalls ?? 1, impl.extraCpuUs);
      samples[i].push(ms);
      cpuSamples[i].push(cpuMs);
    }
  }
  return impls.map((impl, i) => {
    const ms = median(samples[i]);
    const spread = [Math.min(...samples[i]), Math.max(...samples[i])];
    const cpuMs = median(cpuSamples[i]);
    return { name: impl.name, note: impl.note ?? '', ms, cpuMs, spread, value: figure(ms, how), unit: how.unit };
  });
}

function figure(ms, how) {
  if (how.unit === 'MB/s') return (how.bytes ?? 0) / 1e6 / (ms / 1000);
  if (how.unit === 'ops/s') return 1000 / ms;
  return ms;
}

/** Formats a figure with three significant digits or so. */
export function fmt(value) {
  if (!Number.isFinite(value)) return '-';
  if (value >= 100) return value.toFixed(0);
  if (value >= 10) return value.toFixed(1);
  if (value >= 1) return value.toFixed(2);
  return value.toPrecision(2);
}

/**
 * A markdown table of `rows` with a ratio column against the row named `base`: higher is
 * better for MB/s and ops/s, lower for ms, and the ratio says "times iki's figure". The CPU
 * column is the process's CPU ms per call (median over the rounds).
 */
export function table(rows, base) {
  const ref = rows.find((r) => r.name === base);
  const lines = [`| implementation | ${rows[0].unit} (median) | ratio to ${base} | CPU ms/call | rounds min-max ms/call | note |`,
    '|---|---:|---:|---:|---|---|'];
  for (const r of rows) {
    const ratio = ref ? r.value / ref.value : NaN;
    lines.push(`| ${r.name} | ${fmt(r.value)} | ${Number.isFinite(ratio) ? ratio.toFixed(2) : '-'} | ${fmt(r.cpuMs)} | ${fmt(r.spread[0])}-${fmt(r.spread[1])} | ${r.note} |`);
  }
  return lines.join('\n');
}

function run(cmd, args) {
  try {
    return execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return 'not found';
  }
}

function packageVersion(dir, name) {
  try {
    return JSON.parse(readFileSync(new URL(`../node_modules/${name}/package.json`, dir), 'utf8')).version;
  } catch {
    return 'missing';
  }
}

/** What ran where: machine, toolchain and package versions, load. */
export function environment() {
  const peers = ['@noble/ciphers', '@noble/hashes', '@noble/curves', 'libsodium-wrappers-sumo', 'hash-wasm', 'fflate', 'pako', 'argon2'];
  return {
    date: new Date().toISOString(),
    cpu: cpus()[0]?.model ?? 'unknown',
    cores: cpus().length,
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    loadAverage: loadavg().map((l) => l.toFixed(2)).join(' '),
    node: process.version,
    v8: process.versions.v8,
    openssl: process.versions.openssl,
    zlib: process.versions.zlib,
    rustcWasm: run('/usr/bin/rustc', ['--version']),
    rustcNative: run('rustc', ['--version']),
    wasmOpt: run('wasm-opt', ['--version']),
    wasmBindgen: run('wasm-bindgen', ['--version']),
    commit: run('git', ['rev-parse', '--short', 'HEAD']),
    dirty: run('git', ['status', '--porcelain', '--', 'crates', 'scripts', 'Cargo.lock']) !== '',
    peers: Object.fromEntries(peers.map((p) => [p, packageVersion(import.meta.url, p)])),
  };
}
