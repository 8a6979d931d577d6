// Times the wasm32 build of iki-watermark under Node (V8). Usage:
//   node speed.mjs path/to/iki_watermark_wasm_speed.wasm [side]
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';

const [wasmPath, sideArg] = process.argv.slice(2);
const side = Number(sideArg ?? 4096);
const { instance } = await WebAssembly.instantiate(readFileSync(wasmPath), {});
const { setup, embed, read } = instance.exports;
setup(side);
const mp = (side * side) / 1e6;
const bandRows = Math.max(1, Math.floor((1 << 20) / (side * 4)));
let bestEmbed = Infinity;
for (let i = 0; i < 5; i++) {
  const t0 = performance.now();
  if (embed(0x12345678 + i, bandRows) !== 1) throw new Error('embed failed');
  bestEmbed = Math.min(bestEmbed, performance.now() - t0);
}
let bestRead = Infinity;
let found = 0;
for (let i = 0; i < 3; i++) {
  const t0 = performance.now();
  found = read();
  bestRead = Math.min(bestRead, performance.now() - t0);
}
// The texture was marked 5 times with different ids; the last one dominates
// nothing, so `found` may be 0. Mark once cleanly and read again to check.
setup(side);
embed(0x0badcafe, bandRows);
const readBack = read() >>> 0;
console.log(JSON.stringify({
  side, megapixels: mp, bandRows,
  embedMs: +bestEmbed.toFixed(1), embedMPps: Math.round(mp / (bestEmbed / 1000)),
  detectMs: +bestRead.toFixed(1), detectMPps: Math.round(mp / (bestRead / 1000)),
  readBackOk: readBack === 0x0badcafe, node: process.version,
}));
