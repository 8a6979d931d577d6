// @ts-check
/**
 * make bench-project: save and open of a project in headless Chromium (Debian's, driven by
 * playwright-core), signed by a non-extractable WebCrypto Ed25519 key, unencrypted and with a
 * password (Argon2id 64 MiB, 3 passes): MB/s of content and the renderer process's peak memory,
 * at two sizes so that growth with file size shows. The work runs in a module Web Worker with
 * its own WASM instance; assets are disk-backed Files in the origin-private file system and the
 * project is written through a FileSystemWritableFileStream, as with the File System Access API.
 *
 *   node bench/project/bench.mjs [--count 100] [--mib 2] [--small-count 25] [--rounds 3] [--only-large]
 *     [--digest-here 1]   (the writer hashes the file on the saving thread, no digest worker)
 *
 * Writes bench/project/RESULTS.md and the marked section of bench/RESULTS.md.
 */
import { readFileSync, writeFileSync, readdirSync, existsSync } from 'node:fs';
import { createServer } from 'node:http';
import { loadavg } from 'node:os';
import { extname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execSync } from 'node:child_process';
import { chromium } from 'playwright-core';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const arg = (name, fallback) => {
  const at = process.argv.indexOf(`--${name}`);
  return at < 0 ? fallback : Number(process.argv[at + 1]);
};
const COUNT = arg('count', 100);
const MIB = arg('mib', 2);
const SMALL = arg('small-count', 25);
const ROUNDS = arg('rounds', 3);
const SAME_OBJECTS = arg('same-objects', 0) === 1;
const ONLY = process.argv.includes('--only-large');
const DIGEST_HERE = arg('digest-here', 0) === 1;
const TYPES = { '.html': 'text/html', '.js': 'text/javascript', '.wasm': 'application/wasm', '.map': 'application/json' };
const SERVED = ['bench/project/', 'ts/dist/', 'pkg/'];

const server = createServer((req, res) => {
  const path = normalize(decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname)).replace(/^\/+/, '');
  const file = path === '' ? 'bench/project/page.html' : path;
  if (!SERVED.some((p) => file.startsWith(p)) || file.includes('..')) return void res.writeHead(404).end();
  try {
    res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' }).end(readFileSync(join(ROOT, file)));
  } catch {
    res.writeHead(404).end();
  }
});
await new Promise((done) => server.listen(0, '127.0.0.1', () => done(undefined)));
const port = /** @type {import('node:net').AddressInfo} */ (server.address()).port;

/** RSS in KiB of the Chromium renderer processes (the page and its worker run in one). */
function rendererRss() {
  let total = 0;
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      if (!cmdline.includes('chromium') || !cmdline.includes('--type=renderer')) continue;
      const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
      total += Number(match?.[1] ?? 0);
    } catch { /* the process ended */ }
  }
  return total;
}

const browser = await chromium.launch({ executablePath: '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'] });

/** CPU time (user + system, ms) of every Chromium process: the renderer with its worker, the browser (file I/O), the rest. */
function chromiumCpuMs() {
  let ticks = 0;
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      if (!readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('chromium')) continue;
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch { /* the process ended */ }
  }
  return ticks * 10;
}

/**
 * CPU ticks of every thread of every Chromium process, by `pid/tid`: the critical path of a
 * save is its busiest thread (the saving worker's, the digest worker's, the browser process's
 * file I/O), which bounds its speed on a machine with a core per thread, whatever the load.
 */
function chromiumThreadTicks() {
  const ticks = new Map();
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      if (!readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('chromium')) continue;
      for (const tid of readdirSync(`/proc/${pid}/task`)) {
        const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
        const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
        const fields = stat.slice(stat.lastIndexOf(') ') + 2).split(' ');
        ticks.set(`${pid}/${tid}`, { name, ticks: Number(fields[11]) + Number(fields[12]) });
      }
    } catch { /* the process or thread ended */ }
  }
  return ticks;
}

/** The threads that used most CPU between two {@link chromiumThreadTicks}, in ms, busiest first. */
function busiest(before, after, top = 3) {
  return [...after].map(([id, t]) => ({ name: t.name, ms: (t.ticks - (before.get(id)?.ticks ?? 0)) * 10 }))
    .sort((a, b) => b.ms - a.ms).slice(0, top);
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/**
 * One protection and size: the steps of worker.js one at a time, with the browser's CPU time
 * around each; `ROUNDS` rounds of (copy floor, save) back to back, so that each save's ratio is
 * to a floor measured under the same load; medians reported.
 */
async function scenario(count, password) {
  const page = await browser.newPage();
  await page.goto(`http://127.0.0.1:${port}/`);
  await page.waitForFunction(() => document.title === 'ready');
  const base = rendererRss();
  let peak = base;
  const sampler = setInterval(() => { peak = Math.max(peak, rendererRss()); }, 50);
  const step = async (name) => {
    const cpu = chromiumCpuMs();
    const threads = chromiumThreadTicks();
    const r = await page.evaluate((q) => /** @type {any} */ (window).runInWorker(q), { step: name, count, size: MIB * 1024 * 1024, password, digestElsewhere: !DIGEST_HERE });
    const top = busiest(threads, chromiumThreadTicks());
    return { ...r, cpuMs: chromiumCpuMs() - cpu, busiestMs: top[0]?.ms ?? 0, threads: top };
  };
  try {
    const pick = await step('prepare');
    const sha = await step('sha');
    const cold = await step('cold');
    const copies = [];
    const saves = [];
    for (let r = 0; r < ROUNDS; r++) {
      copies.push(await step('copy'));
      saves.push(await step('save'));
    }
    const open = await step('open');
    await step('cleanup');
    return { pick, sha, cold, copies, saves, open, ratios: saves.map((s, r) => copies[r].ms / s.ms),
      kdfRatios: saves.map((s, r) => copies[r].ms / (s.ms - s.kdfMs)), kdfMs: median(saves.map((s) => s.kdfMs)),
      hashedInSaves: saves.reduce((n, s) => n + s.hashed, 0), bytes: saves[0].bytes, baseMiB: base / 1024, peakMiB: peak / 1024 };
  } finally {
    clearInterval(sampler);
    await page.close();
  }
}

const rows = [];
const started = loadavg().map((l) => l.toFixed(2)).join(' ');
for (const password of [undefined, 'correct horse battery staple']) {
  for (const count of ONLY ? [COUNT] : [SMALL, COUNT]) {
    const load = loadavg()[0].toFixed(2);
    const r = await scenario(count, password);
    const mb = (count * MIB * 1024 * 1024) / 1e6;
    const mib = count * MIB;
    const rate = (ms) => mb / (ms / 1000);
    rows.push({ encrypted: password !== undefined, count, contentMB: mb, load: `${load} → ${loadavg()[0].toFixed(2)}`,
      save: rate(median(r.saves.map((x) => x.ms))), copy: rate(median(r.copies.map((x) => x.ms))), ratio: median(r.ratios),
      ratios: r.ratios.map((x) => Number(x.toFixed(2))), kdfMs: r.kdfMs, kdfRatio: median(r.kdfRatios), cold: rate(r.cold.ms), pick: rate(r.pick.ms), sha: rate(r.sha.ms), open: rate(r.open.ms),
      saveCpu: median(r.saves.map((x) => x.cpuMs)) / mib, copyCpu: median(r.copies.map((x) => x.cpuMs)) / mib, coldCpu: r.cold.cpuMs / mib,
      saveBusiest: median(r.saves.map((x) => x.busiestMs)) / mib, copyBusiest: median(r.copies.map((x) => x.busiestMs)) / mib,
      saveThreads: r.saves.at(-1)?.threads.map((t) => `${t.name} ${(t.ms / mib).toFixed(1)}`).join(', '),
      hashedInSaves: r.hashedInSaves, growth: r.peakMiB - r.baseMiB, peak: r.peakMiB, verdict: r.open.verdict, fileMB: r.bytes / 1e6 });
    process.stderr.write(`bench-project: ${JSON.stringify(rows.at(-1))}\n`);
  }
}
await browser.close();
server.close();
const ended = loadavg().map((l) => l.toFixed(2)).join(' ');
const version = execSync('/usr/bin/chromium --version 2>/dev/null').toString().trim();
const commit = execSync('git rev-parse --short HEAD', { cwd: ROOT }).toString().trim();
const table = [
  '| protection | assets | content | save (digests remembered at the pick) | floor: copy the files | save / floor (median of rounds) | Argon2id in the save; save without it / floor | Chromium CPU per MiB: save, copy | CPU per MiB of the busiest thread: save, copy; floor / save | save with nothing remembered | hashing at the pick | SHA-256 in WASM | open | renderer peak RSS | growth over the idle page | load average (1 min) | verdict |',
  '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|',
  ...rows.map((r) => `| ${r.encrypted ? 'password (Argon2id 64 MiB, t=3)' : 'none'} | ${r.count} x ${MIB} MiB PNG | ${r.contentMB.toFixed(0)} MB | `
    + `${r.save.toFixed(0)} MB/s | ${r.copy.toFixed(0)} MB/s | **${r.ratio.toFixed(2)}x** (${r.ratios.join(', ')}) | ${r.encrypted ? `${r.kdfMs.toFixed(0)} ms; ${r.kdfRatio.toFixed(2)}x` : '-'} | ${r.saveCpu.toFixed(1)} ms, ${r.copyCpu.toFixed(1)} ms | `
    + `${r.saveBusiest.toFixed(1)} ms, ${r.copyBusiest.toFixed(1)} ms; **${(r.copyBusiest / r.saveBusiest).toFixed(2)}x** | `
    + `${r.cold.toFixed(0)} MB/s | ${r.pick.toFixed(0)} MB/s | ${r.sha.toFixed(0)} MB/s | ${r.open.toFixed(0)} MB/s | ${r.peak.toFixed(0)} MiB | `
    + `${r.growth.toFixed(0)} MiB | ${r.load} | ${r.verdict} |`),
];
const section = [
  '## Project files in Chromium (make bench-project)',
  '',
  `Written by \`make bench-project\` on ${new Date().toISOString()} with ${version}, iki ${commit}; load average at start ${started}, at end ${ended}. `
    + 'A module Web Worker with its own WASM instance saves a project of PNG-typed assets (incompressible, stored) from disk-backed Files '
    + 'to a file through a FileSystemWritableFileStream (origin-private file system), signed by a non-extractable WebCrypto Ed25519 key, '
    + 'then opens it from that File (every chunk and the signature checked; assets located, not read). MB/s are of content. '
    + 'The files are hashed once when they are picked (as the project page does, in its worker), so a save reads every asset once; '
    + 'each save gets the files anew (new File objects of the same name, size and time, as a page posts them), and each remembered '
    + 'digest is checked on the bytes written by the native digest. '
    + (DIGEST_HERE ? 'The writer hashes the file for its signature on the saving thread (--digest-here 1). '
      : 'A second Web Worker (the digest worker) hashes the file for its signature while the saving worker writes it. ')
    + 'The floor is copying the same files into one file of the same '
    + `file system, measured just before each save (${ROUNDS} rounds of floor then save; the ratio is the median of the rounds' ratios). `
    + 'CPU per MiB is of every Chromium process (renderer, worker, browser process doing the file I/O), from /proc. '
    + 'The busiest thread (from /proc/<pid>/task) is the critical path: on a machine with a free core for each busy thread a save '
    + 'runs at its pace, so floor / save of the busiest threads is the ratio that the load does not move. '
    + '"Nothing remembered" is a save of files never seen (every asset read twice: hashed, then written). '
    + 'An encrypted save includes its Argon2id key derivation (64 MiB, 3 passes: a fixed cost, not per byte), shown beside. '
    + 'Goals (issue 28 item 4): save at least 0.9x the floor unencrypted, 0.8x encrypted.',
  '',
  ...table,
];
writeFileSync(new URL('./RESULTS.md', import.meta.url), `# iki project bench\n\n${section.slice(2).join('\n')}\n`);
const results = new URL('../RESULTS.md', import.meta.url);
const START = '<!-- bench-project:start -->';
const END = '<!-- bench-project:end -->';
const block = `${START}\n${section.join('\n')}\n${END}`;
const text = existsSync(results) ? readFileSync(results, 'utf8') : '';
writeFileSync(results, text.includes(START) ? text.replace(new RegExp(`${START}[\\s\\S]*${END}`), block) : `${text.trimEnd()}\n\n${block}\n`);
process.stderr.write(`bench-project: wrote bench/project/RESULTS.md and its section of bench/RESULTS.md\n${table.join('\n')}\n`);
