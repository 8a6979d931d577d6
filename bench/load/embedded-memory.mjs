#!/usr/bin/env node
// Memory of the embedded (PGlite) service (issue 23 item 7): starts server/dist/main.js on a
// fresh data directory, reads its resident memory once it listens and again after a few
// seconds, stops it (SIGTERM), starts it again on the same directory and reads the same.
// Prints one JSON line per start with the load average. Not in CI.
//
//   node bench/load/embedded-memory.mjs [--workers 2] [--settle-ms 3000]
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { workers: { type: 'string', default: '2' }, 'settle-ms': { type: 'string', default: '3000' },
  help: { type: 'boolean', short: 'h', default: false } } });
if (values.help) {
  process.stdout.write('Usage: node bench/load/embedded-memory.mjs [--workers 2] [--settle-ms 3000]\n');
  process.exit(0);
}
const dataDir = mkdtempSync(join(tmpdir(), 'iki-mem-'));
const mib = (kib) => Math.round(kib / 1024);
const rss = (pid) => {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (name) => Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? 0);
  return { rssMiB: mib(kib('VmRSS')), hwmMiB: mib(kib('VmHWM')) };
};

async function start(label) {
  const t0 = performance.now();
  const child = spawn(process.execPath, ['server/dist/main.js', '--port', '0', '--data', dataDir],
    { env: { PATH: process.env.PATH, IKI_WORKERS: values.workers, IKI_DRAIN_DELAY_SECONDS: '0' }, stdio: ['ignore', 'ignore', 'pipe'] });
  await new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`service exited with ${code}`)));
    let text = '';
    child.stderr.on('data', (d) => { text += d; if (text.includes('"iki service listening"')) resolve(); });
  });
  const ready = rss(child.pid);
  const startMs = Math.round(performance.now() - t0);
  await new Promise((r) => setTimeout(r, Number(values['settle-ms'])));
  const settled = rss(child.pid);
  console.log(JSON.stringify({ start: label, workers: Number(values.workers), startMs, atListen: ready, settled,
    load: loadavg().map((l) => Number(l.toFixed(2))) }));
  child.removeAllListeners('exit');
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}

try {
  await start('fresh data directory');
  await start('restart on the same directory');
} finally {
  rmSync(dataDir, { recursive: true, force: true });
}
