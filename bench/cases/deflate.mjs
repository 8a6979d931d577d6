// @ts-check
/**
 * Raw DEFLATE of texture data (the CC0 atlases, decoded to RGBA8) at levels 1 and 6, and
 * inflate, cut into 1 MiB chunks as the container cuts entries: iki's WASM (miniz_oxide
 * through iki-format) beside fflate, pako and node:zlib, and, inside one separate WASM
 * module built with the same flags (bench/deflate-wasm), miniz_oxide beside zlib-rs.
 * Every output is inflated again and compared with the input.
 */
import { existsSync, readFileSync } from 'node:fs';
import { deflateRawSync, inflateRawSync, constants } from 'node:zlib';
import * as fflate from 'fflate';
import * as pako from 'pako';
import { compare, fmt, table } from '../lib/harness.mjs';
import { glue } from '../lib/iki.mjs';
import { atlases, chunks } from '../lib/textures.mjs';

const CHUNK = 1 << 20;
const DEFLATE_WASM = new URL('../out/deflate-wasm/iki_bench_deflate.js', import.meta.url);

async function loadRustCodecs() {
  if (!existsSync(DEFLATE_WASM)) return undefined;
  const m = await import(DEFLATE_WASM.href);
  m.initSync({ module: readFileSync(new URL('../out/deflate-wasm/iki_bench_deflate_bg.wasm', import.meta.url)) });
  return m;
}

function equal(a, b) {
  return a.length === b.length && Buffer.from(a.buffer, a.byteOffset, a.length).equals(Buffer.from(b.buffer, b.byteOffset, b.length));
}

/** The deflaters of one level: name -> (chunk) => raw stream. */
function deflaters(level, rust) {
  const iki = new glue.BenchCodec(level);
  const out = {
    'iki (WASM, miniz_oxide)': (c) => iki.deflate(c),
    fflate: (c) => fflate.deflateSync(c, { level }),
    pako: (c) => pako.deflateRaw(c, { level }),
    'node:zlib (native)': (c) => deflateRawSync(c, { level }),
  };
  if (rust) {
    const miniz = new rust.Miniz(level);
    const zlib = new rust.ZlibRs(level);
    out['miniz_oxide (bench WASM)'] = (c) => miniz.deflate(c);
    out['zlib-rs (bench WASM)'] = (c) => zlib.deflate(c);
  }
  return out;
}

export async function run(options) {
  const images = atlases(options.quick ? 2 : 4);
  const parts = images.flatMap((img) => chunks(img.rgba, CHUNK));
  const total = parts.reduce((n, p) => n + p.length, 0);
  const rust = await loadRustCodecs();
  const how = { rounds: Math.max(3, Math.ceil(options.rounds / 2)), minMs: 1, unit: /** @type {'MB/s'} */ ('MB/s'), bytes: total };
  const sections = [];
  const data = {};
  let ikiStreams = [];
  for (const level of [1, 6]) {
    const impls = deflaters(level, rust);
    const sizes = {};
    const rows = await compare(Object.entries(impls).map(([name, fn]) => ({
      name,
      run: () => { for (const p of parts) fn(p); },
      check: () => {
        let size = 0;
        const streams = parts.map((p) => {
          const s = fn(p);
          if (!equal(inflateRawSync(s), p)) throw new Error(`${name} level ${level}: does not inflate to its input`);
          size += s.length;
          return s;
        });
        sizes[name] = size;
        if (name.startsWith('iki') && level === 6) ikiStreams = streams;
      },
    })), how);
    for (const r of rows) r.note = `output ${(100 * sizes[r.name] / total).toFixed(1)} % of input`;
    data[`level${level}`] = rows;
    sections.push(`**Deflate, level ${level}**`, '', table(rows, 'iki (WASM, miniz_oxide)'), '');
  }
  // Every inflater reads the same streams: iki's level-6 output.
  const iki = new glue.BenchCodec(6);
  const inflaters = {
    'iki (WASM, miniz_oxide)': (s, n) => iki.inflate(s, n),
    fflate: (s) => fflate.inflateSync(s),
    pako: (s) => pako.inflateRaw(s),
    'node:zlib (native)': (s) => inflateRawSync(s),
  };
  if (rust) {
    const miniz = new rust.Miniz(6);
    const zlib = new rust.ZlibRs(6);
    inflaters['miniz_oxide (bench WASM)'] = (s, n) => miniz.inflate(s, n);
    inflaters['zlib-rs (bench WASM)'] = (s, n) => zlib.inflate(s, n);
  }
  const inflate = await compare(Object.entries(inflaters).map(([name, fn]) => ({
    name,
    run: () => { for (let i = 0; i < parts.length; i++) fn(ikiStreams[i], parts[i].length); },
    check: () => parts.forEach((p, i) => { if (!equal(fn(ikiStreams[i], p.length), p)) throw new Error(`${name}: inflate differs`); }),
  })), how);
  data.inflate = inflate;
  sections.push('**Inflate (of iki\'s level-6 streams)**', '', table(inflate, 'iki (WASM, miniz_oxide)'));
  const verdict = rust ? zlibVerdict(data) : 'The bench WASM module (bench/deflate-wasm) was not built, so miniz_oxide and zlib-rs were not compared.';
  const md = [
    '## Raw DEFLATE of texture data',
    '',
    `Input: ${images.map((i) => `${i.name} (${i.width}x${i.height})`).join(', ')}, decoded to RGBA8: ${fmt(total / 1e6)} MB in ${parts.length} chunks of at most 1 MiB, each deflated as one raw stream (as DATA chunks are). Every output is checked by inflating it with node:zlib. Ratios of the last two rows compare two WASM builds of the same flags and should be read against each other.`,
    '',
    ...sections,
    '',
    verdict,
  ].join('\n');
  return { md, data };
}

function zlibVerdict(data) {
  const pick = (rows, name) => rows.find((r) => r.name === name)?.value ?? NaN;
  const parts = [];
  for (const [key, label] of [['level1', 'deflate level 1'], ['level6', 'deflate level 6'], ['inflate', 'inflate']]) {
    const m = pick(data[key], 'miniz_oxide (bench WASM)');
    const z = pick(data[key], 'zlib-rs (bench WASM)');
    parts.push(`${label}: zlib-rs ${fmt(z / m)}x miniz_oxide`);
  }
  return `miniz_oxide vs zlib-rs inside WASM (same flags): ${parts.join('; ')}.`;
}
