// The export bench's worker, with its own WASM instance: copies the model folder the bench
// server offers into the origin-private file system (disk-backed Files, as a dropped folder's
// are), then runs the seller page's export up to the upload (`packModelFolder` of
// @iki/core/browser master-export.ts: pack's checks, the WASM writer, sealed to a recipient,
// signed by a non-extractable WebCrypto Ed25519 key) into its scratch file.
import { loadWasm } from '/ts/dist/wasm.js';
import { packModelFolder } from '/ts/dist/browser/master-export.js';
import { fromBase64Url } from '/ts/dist/keys.js';
import { cryptoKeySigner } from '/ts/dist/signer.js';

let root;

async function copyIn(paths) {
  root ??= await navigator.storage.getDirectory();
  const files = [];
  for (const [i, path] of paths.entries()) {
    const handle = await root.getFileHandle(`f${i}`, { create: true });
    const out = await handle.createWritable();
    await (await fetch(`/model/${path.split('/').map(encodeURIComponent).join('/')}`)).body.pipeTo(out);
    files.push({ path, file: await handle.getFile() });
  }
  return files;
}

let files = [];

async function run({ stage, paths, recipient, gc, scratch }) {
  await loadWasm();
  if (stage === 'copy') {
    files = await copyIn(paths);
    return { copied: files.length };
  }
  const pair = await crypto.subtle.generateKey({ name: 'Ed25519' }, false, ['sign', 'verify']);
  const signer = await cryptoKeySigner(pair);
  const controller = new AbortController();
  const phases = {};
  let collected = 0;
  const t = performance.now();
  const packed = await packModelFolder(files, { signer, recipients: [fromBase64Url(recipient, 32)], scratch }, {
    signal: controller.signal,
    progress: (p) => {
      phases[p.phase] ??= performance.now() - t;
      if (gc && performance.now() - collected > 200) {
        collected = performance.now();
        self.gc();
      }
    },
  });
  const ms = performance.now() - t;
  const blob = await packed.file();
  // The module is initialised already: init answers its exports, memory among them.
  const exports = await (await import('/pkg/iki_wasm.js')).default();
  const result = { ms, phases, bytes: blob.size, content: files.reduce((n, f) => n + f.file.size, 0),
    wasmMiB: exports.memory.buffer.byteLength / 1048576 };
  await packed.dispose();
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
