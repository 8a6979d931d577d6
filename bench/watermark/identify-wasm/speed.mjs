// Informed identify through the WASM module the service runs (ts/dist, simd128 build), on a
// 4096 x 4096 texture made of two CC0 atlases (the complete atlas over the tilesheet), for a
// leak halved by 2 x 2 averaging (scale 50 %), a crop to half the area and a bilinear resize to
// 90 %, in turn (KINDS=halved,crop,r90 picks them). Wall time and the process's CPU time (which
// other jobs on a shared machine do not inflate) per request.
// Run after `make build`: node bench/watermark/identify-wasm/speed.mjs [runs]
// (DIST=/other/checkout/ts/dist/index.js compares another build on the same leaks).
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
const DIST = process.env.DIST ?? new URL('../../../ts/dist/index.js', import.meta.url).href;
const { decodeImage, embedWatermark, loadWasm, Suspect, WatermarkKey } = await import(DIST);

const FIXTURES = fileURLToPath(new URL('../../../../shared/fixtures/textures/', import.meta.url));
const runs = Number(process.argv[2] ?? 10);
await loadWasm();
const load = async (name) => decodeImage(new Uint8Array(await readFile(FIXTURES + name)));
const top = await load('kenney-platformer-pack-redux_spritesheet_complete.png');
const sheet = await load('kenney-top-down-shooter_tilesheet_complete_2X.png');
const side = 4096;
const texture = new Uint8Array(side * side * 4);
texture.set(top.rgba, 0);
for (let y = 0; y < 2048; y++) {
  texture.set(sheet.rgba.subarray(y * sheet.width * 4, (y + 1) * sheet.width * 4), (2048 + y) * side * 4);
}
const key = WatermarkKey.fromBytes(new Uint8Array(32).fill(0x42)); // obviously fake
const marked = embedWatermark(key, 77n, side, side, texture);

function halved() {
  const h = side / 2;
  const out = new Uint8Array(h * h * 4);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < h; x++) {
      for (let c = 0; c < 4; c++) {
        const at = (yy, xx) => marked[(yy * side + xx) * 4 + c];
        out[(y * h + x) * 4 + c] = (at(2 * y, 2 * x) + at(2 * y, 2 * x + 1) + at(2 * y + 1, 2 * x) + at(2 * y + 1, 2 * x + 1) + 2) >> 2;
      }
    }
  }
  return { width: h, height: h, rgba: out };
}

function cropped() {
  const [x0, y0, w, h] = [700, 500, 2896, 2896];
  const out = new Uint8Array(w * h * 4);
  for (let y = 0; y < h; y++) out.set(marked.subarray(((y0 + y) * side + x0) * 4, ((y0 + y) * side + x0 + w) * 4), y * w * 4);
  return { width: w, height: h, rgba: out };
}

function resized(f) {
  const n = Math.round(side * f);
  const out = new Uint8Array(n * n * 4);
  for (let y = 0; y < n; y++) {
    const sy = (y + 0.5) / f - 0.5; const y0 = Math.max(0, Math.floor(sy)); const y1 = Math.min(side - 1, y0 + 1); const fy = Math.min(1, Math.max(0, sy - y0));
    for (let x = 0; x < n; x++) {
      const sx = (x + 0.5) / f - 0.5; const x0 = Math.max(0, Math.floor(sx)); const x1 = Math.min(side - 1, x0 + 1); const fx = Math.min(1, Math.max(0, sx - x0));
      for (let c = 0; c < 4; c++) {
        const at = (yy, xx) => marked[(yy * side + xx) * 4 + c];
        const v = (at(y0, x0) * (1 - fx) + at(y0, x1) * fx) * (1 - fy) + (at(y1, x0) * (1 - fx) + at(y1, x1) * fx) * fy;
        out[(y * n + x) * 4 + c] = Math.round(v);
      }
    }
  }
  return { width: n, height: n, rgba: out };
}
const kinds = (process.env.KINDS ?? 'halved,crop,r90').split(',');
const leakOf = (kind) => (kind === 'halved' ? halved() : kind === 'crop' ? cropped() : resized(0.9));
const times = [];
const cpuTimes = [];
let exact = 0;
for (let k = 0; k < runs; k++) {
  const kind = kinds[k % kinds.length];
  const leak = leakOf(kind);
  const started = performance.now();
  const cpuStart = process.cpuUsage();
  const suspect = Suspect.of(leak.width, leak.height, leak.rgba);
  const blind = suspect.detect(key);
  const blindMs = performance.now() - started;
  const read = blind.found ? blind : suspect.readInformed(key, side, side, texture, 60_000);
  const ms = performance.now() - started;
  const cpu = process.cpuUsage(cpuStart);
  const cpuS = (cpu.user + cpu.system) / 1e6;
  suspect.free();
  times.push(ms);
  cpuTimes.push(cpuS);
  if (read.found && read.licenseId === '000000000000004d') exact += 1;
  console.error(`run ${k + 1}/${runs}: ${kind} (blind read ${(blindMs / 1000).toFixed(2)} s) ${read.found ? 'found' : 'not found'} in ${(ms / 1000).toFixed(2)} s, CPU ${cpuS.toFixed(2)} s`);
}
const quantile = (values, q) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(q * values.length))];
console.log(JSON.stringify({
  node: process.version, runs, exact,
  p50_s: quantile(times, 0.5) / 1000, p95_s: quantile(times, 0.95) / 1000, max_s: Math.max(...times) / 1000,
  cpu_p50_s: quantile(cpuTimes, 0.5), cpu_p95_s: quantile(cpuTimes, 0.95), cpu_max_s: Math.max(...cpuTimes),
}));
key.free();
