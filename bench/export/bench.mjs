// @ts-check
/**
 * make bench-export (not part of make test): exporting a master from a model folder in headless
 * Chromium (the seller page's export up to the upload: pack's checks, textures decoded to
 * pixels, the WASM writer, sealed to an X25519 recipient, signed by a non-extractable
 * WebCrypto Ed25519 key, written to a scratch file of the origin-private file system) beside
 * `iki pack` on the same folder, at two
 * sizes so that memory growth with size shows. MB/s are of the folder's bytes; memory is the
 * peak RSS of this browser's renderer processes (page and worker; other Chromiums on the
 * machine are not counted) and of the CLI's process.
 *
 *   node bench/export/bench.mjs [--mb 200] [--small-mb 50] [--gc] [--blob]
 *   node bench/export/bench.mjs --jobs N [--atlas] [--mb 200]
 *
 * Writes bench/export/RESULTS.md and the marked section of bench/RESULTS.md. With `--jobs N`
 * (issue 28 item 2) each folder is exported with 1 and with N deflate workers (the browser's
 * Web Workers, `iki pack --jobs`), and the rows give wall MB/s and the CPU of every thread
 * (the renderer processes' and the CLI's, from /proc) per MiB of decoded bytes, and the CPU of
 * the thread that runs the writer (the export worker's thread; the CLI's main thread); `--atlas`
 * packs a folder of the four CC0 fixture atlases instead of the synthetic bench textures.
 * Those rows go to their own marked section, beside the earlier one.
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm, stat, writeFile, mkdir } from 'node:fs/promises';
import { createServer } from 'node:http';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { dirname, extname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { encodePng } from '../../tests/fixtures/png.mjs';
import { pseudoRandomBytes, syntheticRgba, wavBytes } from '../../tests/fixtures/packages.mjs';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const arg = (name, fallback) => {
  const at = process.argv.indexOf(`--${name}`);
  return at < 0 ? fallback : Number(process.argv[at + 1]);
};
const MB = arg('mb', 200);
/** `--gc`: collect garbage in the worker every 200 ms (V8's --expose-gc), to tell retained memory from garbage not yet collected. */
const GC = process.argv.includes('--gc');
/** `--blob`: the packed master goes into a Blob instead of a scratch file (to compare memory). */
const SCRATCH = process.argv.includes('--blob') ? 'blob' : 'file';
const SMALL_MB = arg('small-mb', 50);
/** `--jobs N`: compare 1 and N deflate workers (0: the single-thread rows of before). */
const JOBS = arg('jobs', 0);
/** `--atlas`: the four CC0 fixture atlases as the model's textures. */
const ATLAS = process.argv.includes('--atlas');
const ATLASES = ['kenney-platformer-pack-redux_spritesheet_players.png', 'kenney-top-down-shooter_spritesheet_tiles.png',
  'kenney-top-down-shooter_tilesheet_complete_2X.png', 'kenney-platformer-pack-redux_spritesheet_complete.png'];
const CLI = join(ROOT, 'ts/dist/cli/main.js');
const TYPES = { '.html': 'text/html', '.js': 'text/javascript', '.wasm': 'application/wasm', '.map': 'application/json' };
const SERVED = ['bench/export/', 'ts/dist/', 'pkg/'];

/** A model folder of about `mb` MB: 2048 x 2048 textures (gradient and noise) until the size is reached. */
async function modelFolder(dir, mb) {
  const files = {};
  const texture = encodePng(2048, 2048, syntheticRgba(2048, 2048, 5));
  const count = Math.max(1, Math.round((mb * 1e6 * 0.9) / texture.length));
  const textures = Array.from({ length: count }, (_, i) => `Bench.2048/texture_${String(i).padStart(2, '0')}.png`);
  const moc = new Uint8Array(Math.round(mb * 1e6 * 0.1));
  moc.set([0x4d, 0x4f, 0x43, 0x33, 3]);
  moc.set(pseudoRandomBytes(9, Math.min(moc.length - 5, 4_000_000)), 5);
  files['Bench.moc3'] = moc;
  for (const path of textures) files[path] = texture;
  files['motions/idle.motion3.json'] = JSON.stringify({ Version: 3, Meta: { Duration: 4 }, Curves: [{ Target: 'Parameter', Id: 'ParamAngleX', Segments: [0, 0, 0, 4, 1] }] });
  files['sounds/a.wav'] = wavBytes(8000, 440);
  files['Bench.model3.json'] = JSON.stringify({ Version: 3, FileReferences: { Moc: 'Bench.moc3', Textures: textures,
    Motions: { Idle: [{ File: 'motions/idle.motion3.json', Sound: 'sounds/a.wav' }] } } });
  for (const [path, content] of Object.entries(files)) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), content);
  }
  let bytes = 0;
  for (const path of Object.keys(files)) bytes += (await stat(join(dir, path))).size;
  return { paths: Object.keys(files), bytes, textures: count };
}

/** A model folder of the four fixture atlases (decoded: 84.9 MiB of pixels). */
async function atlasFolder(dir) {
  const files = {};
  const textures = ATLASES.map((name) => `Atlas/${name}`);
  for (const [i, name] of ATLASES.entries()) files[textures[i]] = readFileSync(join(ROOT, '../shared/fixtures/textures', name));
  files['Atlas.moc3'] = new Uint8Array([0x4d, 0x4f, 0x43, 0x33, 3, ...pseudoRandomBytes(9, 200_000)]);
  files['Atlas.model3.json'] = JSON.stringify({ Version: 3, FileReferences: { Moc: 'Atlas.moc3', Textures: textures } });
  for (const [path, content] of Object.entries(files)) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), content);
  }
  let bytes = 0;
  for (const path of Object.keys(files)) bytes += (await stat(join(dir, path))).size;
  return { paths: Object.keys(files), bytes, textures: ATLASES.length };
}

/** CPU seconds (user + system) of the processes whose command line matches. */
function cpuSeconds(match) {
  let ticks = 0;
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      if (!match(readFileSync(`/proc/${pid}/cmdline`, 'utf8'), pid)) continue;
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /s, '').split(' ');
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch { /* ended */ }
  }
  return ticks / 100;
}

/**
 * CPU ticks (1/100 s) of each thread of the processes whose command line matches, by
 * `pid/tid`, with the thread's name (Chromium's workers run in threads named `DedicatedWorker`).
 */
function threadTicks(match) {
  const threads = new Map();
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      if (!match(readFileSync(`/proc/${pid}/cmdline`, 'utf8'), pid)) continue;
      for (const tid of readdirSync(`/proc/${pid}/task`)) {
        const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
        const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
        const fields = stat.replace(/^.*\) /s, '').split(' ');
        threads.set(`${pid}/${tid}`, { name, ticks: Number(fields[11]) + Number(fields[12]) });
      }
    } catch { /* ended */ }
  }
  return threads;
}

/** RSS in KiB of the processes whose command line matches. */
function rss(match) {
  let total = 0;
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      if (!match(readFileSync(`/proc/${pid}/cmdline`, 'utf8'), pid)) continue;
      total += Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
    } catch { /* ended */ }
  }
  return total;
}
/** Whether `pid` descends from this process (so other Chromiums on the machine are not counted). */
function ours(pid) {
  for (let at = Number(pid), hops = 0; at > 1 && hops < 16; hops++) {
    if (at === process.pid) return true;
    try {
      at = Number(readFileSync(`/proc/${at}/stat`, 'utf8').replace(/^.*\) /s, '').split(' ')[1]);
    } catch {
      return false;
    }
  }
  return false;
}
const rendererRss = () => rss((cmd, pid) => cmd.includes('--type=renderer') && ours(pid));

/** `iki pack` on `dir` (with `--jobs`, when given): wall time, CPU seconds (/usr/bin/time) and peak RSS. */
async function cliPack(dir, work, recipient, jobs) {
  const out = join(work, 'cli.ikm');
  const t = performance.now();
  const times = join(work, 'times.txt');
  const child = spawn('/usr/bin/time', ['-f', '%U %S', '-o', times, process.execPath, CLI, 'pack', dir, '--key', join(work, 'k.key'),
    '--recipient', recipient, '-o', out, '--force', ...(jobs === undefined ? [] : ['--jobs', String(jobs)])],
  { stdio: ['ignore', 'ignore', 'pipe'] });
  let peak = 0;
  // The writer runs in the CLI's main thread (tid = pid): its CPU, sampled until it exits.
  let main = 0;
  const sampler = setInterval(() => { peak = Math.max(peak, rss((cmd, pid) => cmd.includes(CLI) && ours(pid))); }, 50);
  const mainSampler = setInterval(() => {
    for (const [id, t] of threadTicks((cmd, pid) => cmd.includes(CLI) && ours(pid))) {
      const [pid, tid] = id.split('/');
      if (pid === tid) main = Math.max(main, t.ticks);
    }
  }, 10);
  let stderr = '';
  child.stderr.on('data', (d) => { stderr += d; });
  const code = await new Promise((done) => child.on('exit', done));
  clearInterval(sampler);
  clearInterval(mainSampler);
  if (code !== 0) throw new Error(`iki pack failed: ${stderr}`);
  const cpu = readFileSync(times, 'utf8').trim().split('\n').at(-1).split(' ').reduce((n, x) => n + Number(x), 0);
  return { ms: performance.now() - t, cpu, writerCpu: main / 100, peakMiB: peak / 1024, bytes: (await stat(out)).size };
}

const work = await mkdtemp(join(tmpdir(), 'iki-bench-export-'));
let modelDir = '';
const server = createServer((req, res) => {
  const path = normalize(decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname)).replace(/^\/+/, '');
  if (path.startsWith('model/') && !path.includes('..')) {
    try {
      return void res.writeHead(200).end(readFileSync(join(modelDir, path.slice('model/'.length))));
    } catch {
      return void res.writeHead(404).end();
    }
  }
  const file = path === '' ? 'bench/export/page.html' : path;
  if (!SERVED.some((p) => file.startsWith(p)) || file.includes('..')) return void res.writeHead(404).end();
  try {
    res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' }).end(readFileSync(join(ROOT, file)));
  } catch {
    res.writeHead(404).end();
  }
});
await new Promise((done) => server.listen(0, '127.0.0.1', () => done(undefined)));
const port = /** @type {import('node:net').AddressInfo} */ (server.address()).port;
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run',
    ...(GC ? ['--js-flags=--expose-gc'] : [])] });

const rows = [];
/** Rows of the `--jobs` mode: one folder, exported with 1 and with JOBS deflate workers. */
const jobRows = [];

/** The browser's export of the copied-in folder with `jobs` deflate workers: its result, peak RSS and CPU seconds. */
async function browserPack(model, recipient, jobs) {
  const page = await browser.newPage();
  await page.goto(`http://127.0.0.1:${port}/`);
  await page.waitForFunction(() => document.title === 'ready');
  await page.evaluate((r) => /** @type {any} */ (window).runInWorker(r), { stage: 'copy', paths: model.paths });
  const renderers = (cmd, pid) => cmd.includes('--type=renderer') && ours(pid);
  const cpu0 = cpuSeconds(renderers);
  // The export worker's thread: the renderer's one DedicatedWorker thread before the pack (it
  // did the copy); the deflate workers' threads start during the pack and end with it.
  const workers0 = [...threadTicks(renderers)].filter(([, t]) => t.name.startsWith('DedicatedWorker'));
  const base = rendererRss();
  let peak = base;
  const sampler = setInterval(() => { peak = Math.max(peak, rendererRss()); }, 50);
  const web = await page.evaluate((r) => /** @type {any} */ (window).runInWorker(r), { stage: 'pack', recipient, gc: GC, scratch: SCRATCH, jobs });
  clearInterval(sampler);
  const cpu = cpuSeconds(renderers) - cpu0;
  const threads = threadTicks(renderers);
  const writerCpu = workers0.length === 1 ? ((threads.get(workers0[0][0])?.ticks ?? NaN) - workers0[0][1].ticks) / 100 : NaN;
  await page.close();
  return { ...web, cpu, writerCpu, peakMiB: peak / 1024, growthMiB: (peak - base) / 1024 };
}

async function jobsRows(recipient) {
  modelDir = join(work, 'model-jobs');
  const model = ATLAS ? await atlasFolder(modelDir) : await modelFolder(modelDir, MB);
  const folderMB = model.bytes / 1e6;
  for (const jobs of [1, JOBS]) {
    const load = loadavg()[0].toFixed(2);
    const cli = await cliPack(modelDir, work, recipient, jobs);
    const web = await browserPack(model, recipient, jobs);
    jobRows.push({ jobs, load, folderMB, web, cli });
    process.stderr.write(`bench-export: jobs ${jobs}: ${JSON.stringify(jobRows.at(-1))}\n`);
  }
  await rm(modelDir, { recursive: true, force: true });
}

const started = loadavg().map((l) => l.toFixed(2)).join(' ');
try {
  execFileSync(process.execPath, [CLI, 'keygen', '-o', join(work, 'k.key')]);
  execFileSync(process.execPath, [CLI, 'keygen', '--x25519', '-o', join(work, 'r.id')]);
  const recipient = execFileSync(process.execPath, [CLI, 'keygen', '--public', join(work, 'r.id')], { encoding: 'utf8' }).trim();
  if (JOBS > 0) {
    await jobsRows(recipient);
  } else {
    for (const mb of [SMALL_MB, MB]) {
      modelDir = join(work, `model-${mb}`);
      const model = await modelFolder(modelDir, mb);
      const cli = await cliPack(modelDir, work, recipient);
      const page = await browser.newPage();
      await page.goto(`http://127.0.0.1:${port}/`);
      await page.waitForFunction(() => document.title === 'ready');
      // The folder is copied into the origin-private file system first (as a dropped folder is
      // on disk); memory is sampled from the idle page through the export only.
      await page.evaluate((r) => /** @type {any} */ (window).runInWorker(r), { stage: 'copy', paths: model.paths });
      const base = rendererRss();
      let peak = base;
      const sampler = setInterval(() => { peak = Math.max(peak, rendererRss()); }, 50);
      const web = await page.evaluate((r) => /** @type {any} */ (window).runInWorker(r), { stage: 'pack', recipient, gc: GC, scratch: SCRATCH });
      clearInterval(sampler);
      await page.close();
      const folderMB = model.bytes / 1e6;
      rows.push({ folderMB, textures: model.textures, web: folderMB / (web.ms / 1000), cli: folderMB / (cli.ms / 1000),
        wasmMiB: web.wasmMiB, webPeak: peak / 1024, webGrowth: (peak - base) / 1024, cliPeak: cli.peakMiB, webFile: web.bytes / 1e6, cliFile: cli.bytes / 1e6 });
      process.stderr.write(`bench-export: ${JSON.stringify(rows.at(-1))}\n`);
      await rm(modelDir, { recursive: true, force: true });
    }
  }
} finally {
  await browser.close();
  server.close();
  await rm(work, { recursive: true, force: true });
}
const ended = loadavg().map((l) => l.toFixed(2)).join(' ');
const version = execFileSync('/usr/bin/chromium', ['--version'], { stdio: ['ignore', 'pipe', 'ignore'] }).toString().trim();
const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT }).toString().trim();
if (JOBS > 0) {
  const [one] = jobRows;
  const jobsTable = [
    '| exporter | deflate workers | load (1 min) at start | wall | wall MB/s of the folder | speed-up over 1 | CPU s (all threads) | CPU ms per MB of the folder | writer\'s thread, CPU ms per MB | master |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...jobRows.flatMap((r) => [
      `| browser | ${r.jobs} | ${r.load} | ${(r.web.ms / 1000).toFixed(2)} s | ${(r.folderMB / (r.web.ms / 1000)).toFixed(1)} | `
        + `${(one.web.ms / r.web.ms).toFixed(2)}x | ${r.web.cpu.toFixed(2)} | ${(r.web.cpu * 1000 / r.folderMB).toFixed(1)} | `
        + `${(r.web.writerCpu * 1000 / r.folderMB).toFixed(1)} | ${(r.web.bytes / 1e6).toFixed(2)} MB |`,
      `| iki pack | ${r.jobs} | ${r.load} | ${(r.cli.ms / 1000).toFixed(2)} s | ${(r.folderMB / (r.cli.ms / 1000)).toFixed(1)} | `
        + `${(one.cli.ms / r.cli.ms).toFixed(2)}x | ${r.cli.cpu.toFixed(2)} | ${(r.cli.cpu * 1000 / r.folderMB).toFixed(1)} | `
        + `${(r.cli.writerCpu * 1000 / r.folderMB).toFixed(1)} | ${(r.cli.bytes / 1e6).toFixed(2)} MB |`,
    ]),
  ];
  const what = ATLAS ? 'a model of the four CC0 fixture atlases (84.9 MiB of pixels)' : `the ${MB} MB synthetic bench folder`;
  const jobsSection = [
    `### Master export over the cores (make bench-export BENCH_ARGS="--jobs ${JOBS}${ATLAS ? ' --atlas' : ''}")`,
    '',
    `Written on ${new Date().toISOString()} with ${execFileSync('/usr/bin/chromium', ['--version'], { stdio: ['ignore', 'pipe', 'ignore'] }).toString().trim()}, `
      + `iki ${execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT }).toString().trim()}, ${what}, ${availableParallelism()} cores; `
      + `load average at start ${started}, at end ${loadavg().map((l) => l.toFixed(2)).join(' ')}. Each exporter with 1 and with ${JOBS} `
      + 'deflate workers (browser: module Web Workers beside the export worker; CLI: `iki pack --jobs`). CPU is user + system time of the '
      + 'renderer processes (page, export worker, deflate workers) and of the CLI process (/usr/bin/time); the writer\'s thread is '
      + 'the export worker\'s thread and the CLI\'s main thread (/proc/PID/task/TID/stat; the CLI\'s sampled every 10 ms until it exits).',
    '',
    ...jobsTable,
  ];
  const results = new URL('../RESULTS.md', import.meta.url);
  const START = `<!-- bench-export-jobs${ATLAS ? '-atlas' : ''}:start -->`;
  const END = `<!-- bench-export-jobs${ATLAS ? '-atlas' : ''}:end -->`;
  const block = `${START}\n${jobsSection.join('\n')}\n${END}`;
  const text = readFileSync(results, 'utf8');
  const after = '<!-- bench-export:end -->';
  writeFileSync(results, text.includes(START) ? text.replace(new RegExp(`${START}[\\s\\S]*${END}`), block)
    : text.replace(after, `${after}\n\n${block}`));
  process.stderr.write(`bench-export: wrote its section of bench/RESULTS.md\n${jobsTable.join('\n')}\n`);
  process.exit(0);
}
const table = [
  '| folder | textures (2048 x 2048) | browser export | iki pack | browser / CLI | renderer peak RSS | growth over the page before the export | of it, WASM memory | CLI peak RSS | file (browser, CLI) |',
  '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ...rows.map((r) => `| ${r.folderMB.toFixed(0)} MB | ${r.textures} | ${r.web.toFixed(1)} MB/s | ${r.cli.toFixed(1)} MB/s | ${(r.web / r.cli).toFixed(2)}x | `
    + `${r.webPeak.toFixed(0)} MiB | ${r.webGrowth.toFixed(0)} MiB | ${r.wasmMiB.toFixed(0)} MiB | ${r.cliPeak.toFixed(0)} MiB | ${r.webFile.toFixed(1)} MB, ${r.cliFile.toFixed(1)} MB |`),
];
const section = [
  '## Master export in Chromium (make bench-export)',
  '',
  `Written by \`make bench-export\` on ${new Date().toISOString()} with ${version}, iki ${commit}; load average at start ${started}, at end ${ended}. `
    + 'The seller page\'s export up to the upload (`packModelFolder`, in a module Web Worker with its own WASM instance, from disk-backed '
    + 'Files in the origin-private file system, signed by a non-extractable WebCrypto Ed25519 key, sealed to one X25519 recipient, into a scratch file of the same file system) '
    + 'beside `iki pack --recipient` on the same folder. MB/s are of the folder\'s bytes. Goal: at least 0.7x the CLI\'s speed, memory flat with size.'
    + (SCRATCH === 'blob' ? ' Run with --blob: the packed master goes into a Blob, not a scratch file.' : '')
    + (GC ? ' Run with --gc: the worker collects garbage every 200 ms, so the memory columns show what is retained.' : ''),
  '',
  ...table,
];
writeFileSync(new URL('./RESULTS.md', import.meta.url), `# iki export bench\n\n${section.slice(2).join('\n')}\n`);
const results = new URL('../RESULTS.md', import.meta.url);
const START = '<!-- bench-export:start -->';
const END = '<!-- bench-export:end -->';
const block = `${START}\n${section.join('\n')}\n${END}`;
const text = existsSync(results) ? readFileSync(results, 'utf8') : '';
writeFileSync(results, text.includes(START) ? text.replace(new RegExp(`${START}[\\s\\S]*${END}`), block) : `${text.trimEnd()}\n\n${block}\n`);
process.stderr.write(`bench-export: wrote bench/export/RESULTS.md and its section of bench/RESULTS.md\n${table.join('\n')}\n`);
