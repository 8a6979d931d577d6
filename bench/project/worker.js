// The bench's worker, with its own WASM instance: writes the assets to the origin-private
// file system (disk-backed Files, as a user's picked files are), saves the project to a file
// there through a FileSystemWritableFileStream (what the File System Access API gives), then
// opens it from that File. Only the library's modules are imported (ts/dist), as an app would.
import { loadWasm } from '/ts/dist/wasm.js';
import { saveProject } from '/ts/dist/project/save.js';
import { openIki } from '/ts/dist/project/open.js';
import { cryptoKeySigner } from '/ts/dist/signer.js';
import { blobSource } from '/ts/dist/streams.js';

let root;

async function fileIn(name) {
  root ??= await navigator.storage.getDirectory();
  return root.getFileHandle(name, { create: true });
}

/** `count` files of `size` bytes: a PNG signature, then bytes that do not compress. */
async function writeAssets(count, size) {
  const files = [];
  const block = new Uint8Array(1024 * 1024);
  for (let i = 0; i < count; i++) {
    const handle = await fileIn(`asset-${i}.png`);
    const out = await handle.createWritable();
    for (let at = 0; at < size; at += block.length) {
      for (let j = 0; j < block.length; j += 65536) crypto.getRandomValues(block.subarray(j, j + 65536));
      if (at === 0) block.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
      await out.write(block.subarray(0, Math.min(block.length, size - at)));
    }
    await out.close();
    files.push(await handle.getFile());
  }
  return files;
}

/**
 * The two floors of a save, on the same files in the same run: copying them into one file of
 * the same file system (the I/O), and one SHA-256 pass over them in WASM (the signature's digest,
 * which no browser API computes in pieces).
 */
async function floors(files, wasm) {
  let t = performance.now();
  const out = await (await fileIn('copy.bin')).createWritable();
  for (const file of files) for await (const piece of blobSource(file)) await out.write(piece);
  await out.close();
  const copyMs = performance.now() - t;
  t = performance.now();
  const hasher = new wasm.Sha256Hasher();
  for (const file of files) {
    for await (const piece of blobSource(file)) {
      for (let at = 0; at < piece.length; at += 65536) hasher.update(piece.subarray(at, at + 65536));
    }
  }
  hasher.finish();
  hasher.free();
  return { copyMs, shaMs: performance.now() - t };
}

async function run({ count, size, password }) {
  const wasm = await loadWasm();
  const files = await writeAssets(count, size);
  const floor = await floors(files, wasm);
  const pair = await crypto.subtle.generateKey({ name: 'Ed25519' }, false, ['sign', 'verify']);
  const signer = await cryptoKeySigner(pair);
  const target = await fileIn('project.iki');
  const output = await target.createWritable();
  let t = performance.now();
  const phases = {};
  const saved = await saveProject({
    onProgress: (p) => { phases[p.phase] ??= performance.now() - t; },
    snapshot: { name: 'bench', layers: files.map((_, i) => ({ asset: `images/${i}.png` })) },
    assets: files.map((file, i) => ({ name: `images/${i}.png`, data: file, type: 'image/png' })),
    signer, app: 'iki-bench', name: 'bench', canvas: { width: 1920, height: 1080 }, output,
    ...(password === undefined ? {} : { protection: { password } }),
  });
  const saveMs = performance.now() - t;
  phases.end = saveMs;
  const file = await target.getFile();
  t = performance.now();
  const opened = await openIki(file, password === undefined ? {} : { password });
  const openMs = performance.now() - t;
  t = performance.now();
  const one = await opened.readAsset(opened.assets[0].name);
  const readOneMs = performance.now() - t;
  const result = { ...floor, phases, saveMs, openMs, readOneMs, bytes: saved.bytes, content: count * size, verdict: opened.verdict.kind, readOne: one.length };
  opened.close();
  for await (const name of root.keys()) await root.removeEntry(name);
  return result;
}

self.onmessage = async (e) => {
  try {
    self.postMessage(await run(e.data));
  } catch (error) {
    self.postMessage({ error: `${error?.name}: ${error?.message}` });
  }
};
