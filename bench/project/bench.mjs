// @ts-check
/**
 * make bench-project: save and open of a project in headless Chromium (Debian's, driven by
 * playwright-core), signed by a non-extractable WebCrypto Ed25519 key, unencrypted and with a
 * password (Argon2id 64 MiB, 3 passes): MB/s of content and the renderer process's peak memory,
 * at two sizes so that growth with file size shows. The work runs in a module Web Worker with
 * its own WASM instance; assets are disk-backed Files in the origin-private file system and the
 * project is written through a FileSystemWritableFileStream, as with the File System Access API.
 *
 *   node bench/project/bench.mjs [--count 100] [--mib 2] [--small-count 25]
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

async function scenario(count, password) {
  const page = await browser.newPage();
  await page.goto(`http://127.0.0.1:${port}/`);
  await page.waitForFunction(() => document.title === 'ready');
  const base = rendererRss();
  let peak = base;
  const sampler = setInterval(() => { peak = Math.max(peak, rendererRss()); }, 50);
  try {
    const result = await page.evaluate((r) => /** @type {any} */ (window).runInWorker(r), { count, size: MIB * 1024 * 1024, password });
    return { ...result, baseMiB: base / 1024, peakMiB: peak / 1024 };
  } finally {
    clearInterval(sampler);
    await page.close();
  }
}

const rows = [];
const started = loadavg().map((l) => l.toFixed(2)).join(' ');
for (const password of [undefined, 'correct horse battery staple']) {
  for (const count of [SMALL, COUNT]) {
    const r = await scenario(count, password);
    const mb = r.content / 1e6;
    rows.push({ encrypted: password !== undefined, count, contentMB: mb, save: mb / (r.saveMs / 1000), open: mb / (r.openMs / 1000),
      copy: mb / (r.copyMs / 1000), sha: mb / (r.shaMs / 1000),
      growth: r.peakMiB - r.baseMiB, peak: r.peakMiB, verdict: r.verdict, fileMB: r.bytes / 1e6, phases: r.phases });
    process.stderr.write(`bench-project: ${JSON.stringify(rows.at(-1))}\n`);
  }
}
await browser.close();
server.close();
const ended = loadavg().map((l) => l.toFixed(2)).join(' ');
const version = execSync('/usr/bin/chromium --version 2>/dev/null').toString().trim();
const commit = execSync('git rev-parse --short HEAD', { cwd: ROOT }).toString().trim();
const table = [
  '| protection | assets | content | save | open | floor: copy the files | floor: SHA-256 in WASM | renderer peak RSS | growth over the idle page | verdict |',
  '|---|---:|---:|---:|---:|---:|---:|---:|---:|---|',
  ...rows.map((r) => `| ${r.encrypted ? 'password (Argon2id 64 MiB, t=3)' : 'none'} | ${r.count} x ${MIB} MiB PNG | ${r.contentMB.toFixed(0)} MB | `
    + `${r.save.toFixed(0)} MB/s | ${r.open.toFixed(0)} MB/s | ${r.copy.toFixed(0)} MB/s | ${r.sha.toFixed(0)} MB/s | ${r.peak.toFixed(0)} MiB | `
    + `${r.growth.toFixed(0)} MiB | ${r.verdict} |`),
];
const section = [
  '## Project files in Chromium (make bench-project)',
  '',
  `Written by \`make bench-project\` on ${new Date().toISOString()} with ${version}, iki ${commit}; load average at start ${started}, at end ${ended}. `
    + 'A module Web Worker with its own WASM instance saves a project of PNG-typed assets (incompressible, stored) from disk-backed Files '
    + 'to a file through a FileSystemWritableFileStream (origin-private file system), signed by a non-extractable WebCrypto Ed25519 key, '
    + 'then opens it from that File (every chunk and the signature checked; assets located, not read). MB/s are of content. '
    + 'The floors are measured on the same files in the same run: copying them into one file (the I/O a save cannot avoid) and one '
    + 'SHA-256 pass in WASM (the digest the signature covers, which no browser API computes in pieces); a save also reads every asset '
    + 'twice (the manifest, with every hash, precedes the data). '
    + 'Goals: save and open at least 150 MB/s unencrypted and 100 MB/s encrypted; page memory flat in file size.',
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
