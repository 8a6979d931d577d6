// @ts-check
/**
 * zlib-rs beside the deflater of DATA chunks, in WASM, texture by texture (issue 28 items 2
 * and 3; the native twin is `deflaters` in crates/iki-license/tests/codec_cost.rs): each CC0
 * atlas as an export deflates it (unmarked, iki's level 6) and as a copy does (marked by the
 * watermark, iki's level 1), the bench texture and a pattern of long repeats. iki's deflater
 * is pkg/'s BenchCodec (iki_format::encoding::Deflater: miniz_oxide, sampled); zlib-rs is
 * bench/deflate-wasm's ZlibRs (same build flags; build it with `make bench` or bench/run.sh).
 * Figures: CPU ms of this process per MiB (best of ROUNDS, default 3) and output, % of the
 * pixels; every stream is inflated by node:zlib and compared. Usage: node bench/deflaters.mjs
 */
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { inflateRawSync } from 'node:zlib';
import { syntheticRgba } from '../tests/fixtures/packages.mjs';
import { glue } from './lib/iki.mjs';
import { atlases, chunks } from './lib/textures.mjs';

const rounds = Number(process.env.ROUNDS ?? 3);
const zlibRs = await import(new URL('./out/deflate-wasm/iki_bench_deflate.js', import.meta.url).href);
zlibRs.initSync({ module: readFileSync(new URL('./out/deflate-wasm/iki_bench_deflate_bg.wasm', import.meta.url)) });

const key = glue.WasmWatermarkKey.fromBytes(new Uint8Array(32).fill(7));
/** @type {Array<[string, Uint8Array, boolean]>} name, pixels, marked */
const inputs = [];
for (const { name, width, height, rgba } of atlases()) {
  inputs.push([name, rgba, false]);
  inputs.push([`${name}, marked`, glue.embedWatermark(key, 0x0123456789abn, width, height, rgba), true]);
}
inputs.push(['bench texture 2048x2048', syntheticRgba(2048, 2048, 5), false]);
const repeats = new Uint8Array(16 << 20);
for (let i = 0; i < repeats.length; i++) repeats[i] = Math.floor(((i * 7) % 4093) / 64) ^ (i % 3);
inputs.push(['repeats', repeats, false]);

const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const load = () => loadavg().map((x) => x.toFixed(2)).join(' ');
console.log(`load ${load()} at ${new Date().toISOString()}`);
console.log('input | deflater | CPU ms/MiB | % of pixels');
for (const [name, pixels, marked] of inputs) {
  const parts = chunks(pixels, 1 << 20);
  const mib = pixels.length / 1048576;
  // A copy deflates marked pixels at level 1, an export unmarked ones at level 6.
  const levels = marked ? [1, 2] : [6, 5, 7];
  /** @type {Array<[string, { deflate(c: Uint8Array): Uint8Array, free(): void }]>} */
  const codecs = [
    [`miniz_oxide ${levels[0]} (iki)`, new glue.BenchCodec(levels[0])],
    ...levels.map((l) => /** @type {[string, any]} */ ([`zlib-rs ${l}`, new zlibRs.ZlibRs(l)])),
  ];
  for (const [label, codec] of codecs) {
    let best = Infinity;
    let size = 0;
    for (let r = 0; r < rounds; r++) {
      const start = cpuMs();
      const streams = parts.map((c) => codec.deflate(c));
      best = Math.min(best, cpuMs() - start);
      size = streams.reduce((n, s) => n + s.length, 0);
      if (r === 0) {
        streams.forEach((s, i) => {
          if (!inflateRawSync(s).equals(parts[i])) throw new Error(`${label}: chunk ${i} of ${name} does not inflate to its input`);
        });
      }
    }
    codec.free();
    console.log(`${name} | ${label} | ${(best / mib).toFixed(2)} | ${((size / pixels.length) * 100).toFixed(2)}`);
  }
}
console.log(`load ${load()} at ${new Date().toISOString()}`);
