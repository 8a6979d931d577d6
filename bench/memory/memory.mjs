// Peak memory of streaming a large encrypted container through the TS API
// (SPEC "Limits": memory during streaming stays around one chunk).
//
// Writes SIZE bytes (default 1 GiB) as one entry of an encrypted container
// (one recipient slot; see README.md) to a temporary file through
// writeContainer's ReadableStream, then reads it back with readContainer
// from a file stream and checks the plaintext's SHA-256. Entry data is
// generated piece by piece and never held whole.
//
// Method: resident set size is sampled every 20 ms and at every event. The
// cold figure is its peak above the RSS right after the module loaded (and
// a GC), over a warm-up round trip of WARMUP bytes and the measured one; it
// includes V8 compiling the hot WASM and JS code and the high-water mark of
// garbage chunk copies V8 has not yet collected. The warm figure is the peak
// of the measured round trip above the RSS after the warm-up (and a GC).
//
//   node --expose-gc bench/memory/memory.mjs [--size BYTES] [--chunk-size BYTES]
//     [--encoding stored|deflate] [--warmup BYTES] [--gc-every MiB]
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { parseArgs } from 'node:util';

const iki = await import(new URL('../../ts/dist/index.js', import.meta.url).href);
// The glue module ts/dist loaded; once initialised, initSync returns its exports.
const glue = await import(new URL('../../pkg/iki_wasm.js', import.meta.url).href);

const { values } = parseArgs({
  options: {
    size: { type: 'string', default: String(1024 ** 3) },
    'chunk-size': { type: 'string', default: String(1024 * 1024) },
    encoding: { type: 'string', default: 'stored' },
    warmup: { type: 'string', default: String(32 * 1024 * 1024) },
    'gc-every': { type: 'string', default: '0' },
  },
});
const MiB = 1024 * 1024;
const PIECE = 64 * 1024;
const CHUNK_SIZE = Number(values['chunk-size']);
/** With --gc-every N, a full GC every N MiB streamed: the peak then shows live memory only. */
const GC_EVERY = Number(values['gc-every']) * MiB;

const peaks = { rss: 0, arrayBuffers: 0, coldRss: 0 };
function sample() {
  const { rss, arrayBuffers } = process.memoryUsage();
  peaks.rss = Math.max(peaks.rss, rss);
  peaks.coldRss = Math.max(peaks.coldRss, rss);
  peaks.arrayBuffers = Math.max(peaks.arrayBuffers, arrayBuffers);
}
let sinceGc = 0;
function streamed(bytes) {
  sinceGc += bytes;
  if (GC_EVERY > 0 && sinceGc >= GC_EVERY) {
    sample();
    globalThis.gc?.();
    sinceGc = 0;
  }
}

/** `size` bytes in 64 KiB pieces from one reused buffer, hashed as they go. */
async function* generate(size, hash) {
  const buffer = new Uint8Array(PIECE);
  for (let at = 0, n = 0; at < size; at += PIECE, n++) {
    for (let i = 0; i < PIECE; i += 4) buffer[i] = (n * 2654435761 + i) & 0xff;
    const piece = buffer.subarray(0, Math.min(PIECE, size - at));
    hash.update(piece);
    streamed(piece.length);
    yield piece;
  }
}

/** Writes then reads `size` bytes through `file`; returns timings and checks. */
async function roundTrip(size, file, keys) {
  const written = createHash('sha256');
  let started = performance.now();
  const stream = iki.writeContainer(
    [{ path: 'big.bin', type: 'application/octet-stream', encoding: values.encoding, data: generate(size, written), size }],
    {
      kind: 'project',
      signingKey: keys.signingKey,
      signer: { kind: 'device', name: 'bench' },
      meta: { format: 'iki-project', version: 1, name: 'bench', savedAt: '2024-01-01T00:00:00Z', canvas: { width: 1, height: 1 }, app: 'bench' },
      chunkSize: CHUNK_SIZE,
      protection: { recipients: [keys.identity.publicKey] },
    },
  );
  await pipeline(Readable.fromWeb(stream), createWriteStream(file));
  const writeSeconds = (performance.now() - started) / 1000;
  const writePeakRss = peaks.rss;
  started = performance.now();
  const read = createHash('sha256');
  let bytes = 0;
  let verified = false;
  const source = createReadStream(file, { highWaterMark: PIECE });
  for await (const event of iki.readContainer(source, { kind: 'project', unlock: { identity: keys.identity } })) {
    sample();
    if (event.type === 'chunk') {
      read.update(event.data);
      bytes += event.data.length;
      streamed(event.data.length);
    }
    if (event.type === 'end') verified = true;
  }
  const readSeconds = (performance.now() - started) / 1000;
  return {
    fileBytes: (await stat(file)).size,
    verified,
    plaintextMatches: bytes === size && written.digest('hex') === read.digest('hex'),
    writePeakRss,
    writeMiBps: +(size / MiB / writeSeconds).toFixed(1),
    readMiBps: +(size / MiB / readSeconds).toFixed(1),
  };
}

const mib = (bytes) => +(bytes / MiB).toFixed(1);
await iki.loadWasm();
const wasmMemory = () => glue.initSync(undefined).memory.buffer.byteLength;
const keys = { signingKey: iki.SigningKey.generate(), identity: iki.X25519Identity.generate() };
const dir = await mkdtemp(join(tmpdir(), 'iki-memory-'));
const timer = setInterval(sample, 20);
try {
  const size = Number(values.size);
  globalThis.gc?.();
  const cold = process.memoryUsage();
  const wasmCold = wasmMemory();
  peaks.coldRss = cold.rss;
  const warm = await roundTrip(Number(values.warmup), join(dir, 'warmup.iki'), keys);
  if (!warm.verified || !warm.plaintextMatches) throw new Error('warm-up round trip failed');
  await rm(join(dir, 'warmup.iki'));
  globalThis.gc?.();
  const baseline = process.memoryUsage();
  peaks.rss = baseline.rss;
  peaks.arrayBuffers = baseline.arrayBuffers;
  const run = await roundTrip(size, join(dir, 'big.iki'), keys);
  sample();
  const result = {
    entryBytes: size,
    fileBytes: run.fileBytes,
    chunkSize: CHUNK_SIZE,
    encoding: values.encoding,
    protection: 'one recipient slot (X25519)',
    gcEveryMiB: GC_EVERY / MiB,
    verified: run.verified,
    plaintextMatches: run.plaintextMatches,
    warmupBytes: Number(values.warmup),
    coldBaselineRssMiB: mib(cold.rss),
    coldPeakRssGrowthMiB: mib(peaks.coldRss - cold.rss),
    warmBaselineRssMiB: mib(baseline.rss),
    warmPeakRssGrowthWriteMiB: mib(run.writePeakRss - baseline.rss),
    warmPeakRssGrowthMiB: mib(peaks.rss - baseline.rss),
    peakArrayBuffersGrowthMiB: mib(peaks.arrayBuffers - baseline.arrayBuffers),
    wasmMemoryMiB: { cold: mib(wasmCold), end: mib(wasmMemory()) },
    writeMiBps: run.writeMiBps,
    readMiBps: run.readMiBps,
    node: process.version,
  };
  console.log(JSON.stringify(result, null, 2));
  if (!result.verified || !result.plaintextMatches) process.exitCode = 1;
} finally {
  clearInterval(timer);
  keys.signingKey.free();
  keys.identity.free();
  await rm(dir, { recursive: true, force: true });
}
