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

/** `jobs` deflate workers (deflate-worker.js) as a ChunkDeflater of @iki/core. */
function deflatePool(jobs) {
  const workers = Array.from({ length: jobs }, () => new Worker('/bench/export/deflate-worker.js', { type: 'module' }));
  const busy = workers.map(() => 0);
  const waiting = new Map();
  let nextId = 0;
  workers.forEach((w, i) => {
    w.onmessage = ({ data }) => {
      busy[i] -= 1;
      const done = waiting.get(data.id);
      waiting.delete(data.id);
      if (data.error === undefined) done.resolve(data.chunk);
      else done.reject(new Error(data.error));
    };
  });
  return {
    concurrency: jobs,
    deflate(raw, options) {
      const i = busy.indexOf(Math.min(...busy));
      busy[i] += 1;
      const id = nextId++;
      return new Promise((resolve, reject) => {
        waiting.set(id, { resolve, reject });
        workers[i].postMessage({ id, raw, options }, [raw.buffer]);
      });
    },
    terminate: () => workers.forEach((w) => w.terminate()),
  };
}

async function run({ stage, paths, recipient, gc, scratch, jobs = 1 }) {
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
  const pool = jobs > 1 ? deflatePool(jobs) : undefined;
  const t = performance.now();
  const packed = await packModelFolder(files, { signer, recipients: [fromBase64Url(recipient, 32)], scratch,
    ...(pool === undefined ? {} : { deflater: pool }) }, {
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
  pool?.terminate();
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
