// @ts-check
/**
 * Whole pipelines through the TS API, in MB/s of decoded model bytes per core (one thread):
 * writing a signed, encrypted master of the generated model (1 MiB chunks, deflate level 6,
 * two recipient slots); opening and verifying it (readContainer with an X25519 identity);
 * and the license copy (ServiceKeys.copyLicense: master opened and checked, textures
 * watermarked, every chunk deflated at COPY_DEFLATE_LEVEL and sealed under the license key,
 * signed; the reference deflates at the same level).
 * Beside each, the native reference of bench/lib/reference.mjs doing the same work on the
 * same chunks with node:crypto and node:zlib, without the watermark. Then a breakdown of
 * the copy's cost, timed on the same data with the raw WASM primitives.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { compare, fmt, table } from '../lib/harness.mjs';
import { api, glue } from '../lib/iki.mjs';
import { withWasmSha256 } from './sha256.mjs';

/** iki-license's level for every copy chunk (generated into ts/src/limits.ts). */
const COPY_LEVEL = api.COPY_DEFLATE_LEVEL;
import { chunkPlan, entries, modelFiles } from '../lib/model.mjs';
import { referenceCopy, referenceKeys, referenceOpen, referenceWrite } from '../lib/reference.mjs';

const CHUNK = 1 << 20;
const LICENSE = { id: '0123456789abcdef', licensee: 'acct_buyer', licenseeName: 'Bench Buyer', seller: 'acct_seller', issuedAt: 1_700_000_000_000 };

async function drain(iterable, keep) {
  const parts = [];
  let length = 0;
  for await (const piece of iterable) {
    length += piece.length;
    if (keep) parts.push(piece);
  }
  return keep ? Buffer.concat(parts) : length;
}

async function readAll(source, unlock, onChunk) {
  let verified = false;
  for await (const ev of api.readContainer(source, { kind: 'model', unlock })) {
    if (ev.type === 'chunk') onChunk(ev);
    if (ev.type === 'end') verified = true;
  }
  if (!verified) throw new Error('no end event');
}

export async function run(options) {
  const files = await modelFiles(options.quick);
  const list = entries(files);
  const decoded = files.reduce((n, f) => n + f.data.length, 0);
  const keys = api.ServiceKeys.fromRoot(new Uint8Array(32).fill(0x5e), 'https://bench.iki.test');
  const signingKey = api.SigningKey.generate();
  const identity = api.X25519Identity.generate();
  const writeOptions = {
    kind: 'model', signingKey, signer: { kind: 'device', name: 'bench' }, createdMs: 1_700_000_000_000,
    meta: { format: 'iki-model', version: 1, name: 'Bench', role: 'master' },
    protection: { recipients: [keys.x25519PublicKey, identity.publicKey] },
  };
  const write = (keep) => drain(api.writeContainer(list, writeOptions), keep);
  const master = new Uint8Array(await write(true));
  const ref = { id: 'mst_bench', sha256: new Uint8Array(createHash('sha256').update(master).digest()) };
  const copy = (keep) => drain(keys.copyLicense(master, ref, LICENSE), keep);
  const expected = files.map((f) => createHash('sha256').update(f.data).digest('hex'));

  const plan = chunkPlan(files, CHUNK);
  const rk = referenceKeys();
  const refFile = referenceWrite(plan, rk.key, rk.signer);
  const how = { rounds: options.quick ? 3 : 5, minMs: 1, unit: /** @type {'MB/s'} */ ('MB/s'), bytes: decoded };

  const rows = await compare([
    { name: 'iki write', run: () => write(false), check: () => checkOpen(master, identity, expected) },
    { name: 'reference write', run: () => referenceWrite(plan, rk.key, rk.signer) },
    { name: 'iki open and verify', run: () => readAll(master, { identity }, () => {}) },
    { name: 'iki open and verify, WASM SHA-256', run: () => withWasmSha256(() => readAll(master, { identity }, () => {})) },
    { name: 'reference open and verify', run: () => referenceOpen(refFile, plan, rk.key, rk.signer) },
    { name: 'iki license copy', run: () => copy(false), check: async () => checkCopy(await copy(true), keys, ref, files, expected) },
    { name: 'iki license copy, WASM SHA-256', run: () => withWasmSha256(() => copy(false)) },
    { name: 'iki upload check', run: () => keys.verifyMaster(master), check: () => checkUpload(keys, master, ref) },
    { name: 'iki upload check, WASM SHA-256', run: () => withWasmSha256(() => keys.verifyMaster(master)), check: () => withWasmSha256(() => checkUpload(keys, master, ref)) },
    { name: 'reference license copy', run: () => referenceCopy(refFile, plan, rk.key, rk.signer, rk.copyKey, rk.copySigner, COPY_LEVEL) },
  ], how);
  const pick = (name) => rows.find((r) => r.name === name);
  const ratio = (a, b) => pick(a).value / pick(b).value;
  const breakdown = await costBreakdown(files, plan, pick('iki license copy').ms, options);
  [signingKey, identity, keys].forEach((k) => k.free());

  const md = [
    '## Pipelines (one core, MB/s of decoded model bytes)',
    '',
    `Model: the generated package of tests/fixtures (${files.length} files, ${files.filter((f) => f.encoding === 'rgba8').map((f) => `${f.width}x${f.height}`).join(', ')} textures as rgba8), ${fmt(decoded / 1e6)} MB decoded; the master is ${fmt(master.length / 1e6)} MB. The references run node:crypto and node:zlib (native) over the same chunks; see bench/lib/reference.mjs. Checked: the master opens with every entry's SHA-256; the license copy opens in a PlayerSession with every non-texture entry byte-identical and every texture the right size and changed by the mark.`,
    '',
    table(rows, 'iki write'),
    '',
    `Ratios to the native reference: write ${fmt(ratio('iki write', 'reference write'))}, open and verify **${fmt(ratio('iki open and verify', 'reference open and verify'))}** (goal: at least 0.45; ${fmt(ratio('iki open and verify, WASM SHA-256', 'reference open and verify'))} with WASM's SHA-256), license copy **${fmt(ratio('iki license copy', 'reference license copy'))}** (goal: at least 0.5; ${fmt(ratio('iki license copy, WASM SHA-256', 'reference license copy'))} with WASM's SHA-256). Upload check (ServiceKeys.verifyMaster, what server/src/services/upload-scan.ts runs in a worker) with the node:crypto backend: **${fmt(ratio('iki upload check', 'iki upload check, WASM SHA-256'))}x** its speed with WASM's SHA-256 (goal: at least 1.5x). The rows marked "WASM SHA-256" run with \`useHostSha256(false)\`, as browsers hash; the others as the Node loader installs it (node:crypto backend, docs/format.md section 2).`,
    '',
    breakdown.md,
  ].join('\n');
  return { md, data: { decoded, masterBytes: master.length, rows, breakdown: breakdown.rows } };
}

async function checkUpload(keys, master, ref) {
  const summary = await keys.verifyMaster(master);
  if (summary.sha256 !== Buffer.from(ref.sha256).toString('hex')) throw new Error('upload check: wrong master sha256');
}

async function checkOpen(master, identity, expected) {
  const hashes = [];
  await readAll(master, { identity }, (ev) => (hashes[ev.entry] ??= createHash('sha256')).update(ev.data));
  hashes.forEach((h, i) => { if (h.digest('hex') !== expected[i]) throw new Error(`master entry ${i} differs`); });
}

async function checkCopy(copyBytes, keys, ref, files, expected) {
  const session = api.PlayerSession.create();
  try {
    session.acceptLicenseKey(LICENSE.id, keys.sealLicenseKey(ref, LICENSE.id, session.publicKey));
    const hashes = [];
    const sizes = [];
    for await (const ev of api.openLicenseCopy(copyBytes, session)) {
      if (ev.type !== 'chunk') continue;
      (hashes[ev.entry] ??= createHash('sha256')).update(ev.data);
      sizes[ev.entry] = (sizes[ev.entry] ?? 0) + ev.data.length;
    }
    files.forEach((f, i) => {
      const same = hashes[i].digest('hex') === expected[i];
      if (sizes[i] !== f.data.length || same !== (f.encoding !== 'rgba8')) throw new Error(`license copy entry ${i} (${f.path}) is wrong`);
    });
  } finally {
    session.free();
  }
}

/** Time of each stage of the copy, from the raw WASM primitives on the same chunks. */
async function costBreakdown(files, plan, copyMs, options) {
  const parts = plan.flatMap((p) => p.parts);
  const inflater = new glue.BenchCodec(6);
  const deflateCopy = new glue.BenchCodec(COPY_LEVEL);
  const streams = parts.map((p) => inflater.deflate(p));
  const key = api.WatermarkKey.fromBytes(new Uint8Array(32).fill(7));
  const textures = files.filter((f) => f.encoding === 'rgba8');
  // The copy deflates marked pixels: the mark's noise makes DEFLATE slower and its output larger.
  const marked = chunkPlan(files.map((f) => (f.encoding === 'rgba8'
    ? { ...f, data: api.embedWatermark(key, 0x0123456789abcdefn, f.width, f.height, f.data) } : f)), CHUNK).flatMap((p) => p.parts);
  const copyStreams = marked.map((p) => deflateCopy.deflate(p));
  const aead = new glue.BenchAead(new Uint8Array(32).fill(9));
  const nonce = new Uint8Array(24);
  const aad = new Uint8Array(45);
  const sealedIn = streams.map((s) => aead.seal(nonce, aad, s));
  const stages = [
    { name: 'AEAD open of the master chunks', run: () => sealedIn.forEach((s) => aead.open(nonce, aad, s)) },
    { name: 'inflate (master, level 6)', run: () => parts.forEach((p, i) => inflater.inflate(streams[i], p.length)) },
    { name: 'SHA-256 of the decoded bytes, one pass (for scale: the copy does not do it)', run: () => { const h = new glue.Sha256Hasher(); parts.forEach((p) => h.update(p)); h.finish(); h.free(); } },
    { name: 'watermark embed (textures)', run: () => textures.forEach((t) => api.embedWatermark(key, 0x0123456789abcdefn, t.width, t.height, t.data)) },
    { name: `deflate level ${COPY_LEVEL} (copy, marked pixels)`, run: () => marked.forEach((p) => deflateCopy.deflate(p)) },
    { name: 'AEAD seal of the copy chunks', run: () => copyStreams.forEach((s) => aead.seal(nonce, aad, s)) },
  ];
  const rows = await compare(stages, { rounds: options.quick ? 3 : 5, minMs: 1, unit: 'ms' });
  const alternatives = await deflateAlternatives(marked, options);
  [inflater, deflateCopy, aead, key].forEach((h) => h.free());
  const inSize = streams.reduce((n, x) => n + x.length, 0);
  const outSize = copyStreams.reduce((n, x) => n + x.length, 0);
  const md = [
    `Deflated sizes: the master's chunks (level 6, unmarked) ${fmt(inSize / 1e6)} MB; the copy's (level ${COPY_LEVEL}, marked) ${fmt(outSize / 1e6)} MB.`,
    '',
    '**Where the license copy\'s time goes** (each stage timed alone on the same data with the raw WASM exports; share = stage time / license copy time; the rest is the container format, boundary copies, the SHA-256 of the whole master and of the non-texture entries in the writer. The copy does not hash the decoded master entries again (`Reader::skip_entry_hashes`: it compares the whole master\'s SHA-256 with the upload record) and the writer does not hash texture entries of a copy, whose manifest has no sha256; the SHA-256 row shows what that pass would cost):',
    '',
    '| stage | ms | CPU ms | share of the copy |',
    '|---|---:|---:|---:|',
    ...rows.map((r) => `| ${r.name} | ${fmt(r.ms)} | ${fmt(r.cpuMs)} | ${(100 * r.ms / copyMs).toFixed(0)} % |`),
    `| license copy, whole (from the table above) | ${fmt(copyMs)} | | 100 % |`,
    '',
    alternatives.md,
  ].join('\n');
  return { md, rows: [...rows, ...alternatives.rows] };
}

/**
 * The copy's DEFLATE at other levels and with zlib-rs (bench/deflate-wasm, same build flags)
 * on the same marked chunks: time and output size, for choosing COPY_DEFLATE_LEVEL.
 */
async function deflateAlternatives(marked, options) {
  const total = marked.reduce((n, p) => n + p.length, 0);
  const url = new URL('../out/deflate-wasm/iki_bench_deflate.js', import.meta.url);
  const rust = existsSync(url) ? await import(url.href) : undefined;
  rust?.initSync({ module: readFileSync(new URL('../out/deflate-wasm/iki_bench_deflate_bg.wasm', import.meta.url)) });
  const codecs = [1, 3, 6].flatMap((level) => [
    { name: `iki miniz_oxide level ${level}`, codec: new glue.BenchCodec(level) },
    ...(rust ? [{ name: `zlib-rs level ${level} (bench WASM)`, codec: new rust.ZlibRs(level) }] : []),
  ]);
  const sizes = new Map(codecs.map(({ name, codec }) => [name, marked.reduce((n, p) => n + codec.deflate(p).length, 0)]));
  const rows = await compare(codecs.map(({ name, codec }) => ({ name, run: () => marked.forEach((p) => codec.deflate(p)) })),
    { rounds: options.quick ? 3 : 5, minMs: 1, unit: 'MB/s', bytes: total });
  codecs.forEach(({ codec }) => codec.free());
  const md = [
    '**The copy\'s DEFLATE at other levels** (the same marked chunks; the copy uses iki-license\'s `COPY_DEFLATE_LEVEL` = ' + COPY_LEVEL + ' with miniz_oxide):',
    '',
    '| codec | MB/s of marked pixels | CPU ms per MiB | output, % of input |',
    '|---|---:|---:|---:|',
    ...rows.map((r) => `| ${r.name} | ${fmt(r.value)} | ${fmt(r.cpuMs / (total / 2 ** 20))} | ${(100 * sizes.get(r.name) / total).toFixed(1)} % |`),
  ].join('\n');
  return { md, rows };
}
