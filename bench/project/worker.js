// The bench's worker, with its own WASM instance: writes the assets to the origin-private
// file system (disk-backed Files, as a user's picked files are), hashes them as an app does
// when they are picked, saves the project to a file there through a FileSystemWritableFileStream
// (what the File System Access API gives), then opens it from that File. Only the library's
// modules are imported (ts/dist), as an app would.
import { loadWasm } from '/ts/dist/wasm.js';
import { saveProject } from '/ts/dist/project/save.js';
import { AssetDigests } from '/ts/dist/project/digests.js';
import { BatchingFileDigester } from '/ts/dist/file-digest.js';
import { openIki } from '/ts/dist/project/open.js';
import { cryptoKeySigner } from '/ts/dist/signer.js';
import { blobSource } from '/ts/dist/streams.js';

let root;

/**
 * The digest worker (digest-worker.js), started on first use and kept, as the project page
 * keeps its own: a transport for BatchingFileDigester over plain postMessage. With
 * `--digest-here 1` (bench.mjs) the writer hashes on this thread instead, as before.
 */
let digestWorker;
const replies = new Map();
let nextReply = 1;
function callDigest(call, args, transfer = []) {
  if (digestWorker === undefined) {
    digestWorker = new Worker('/bench/project/digest-worker.js', { type: 'module' });
    digestWorker.onmessage = ({ data }) => {
      const waiting = replies.get(data.reply);
      replies.delete(data.reply);
      if (data.error === undefined) waiting?.resolve(data.value);
      else waiting?.reject(new Error(data.error));
    };
  }
  const reply = nextReply++;
  return new Promise((resolve, reject) => {
    replies.set(reply, { resolve, reject });
    digestWorker.postMessage({ call, args, reply }, transfer);
  });
}
const digestTransport = {
  start: () => callDigest('start', []),
  update: (id, seq, bytes) => callDigest('update', [id, seq, bytes], [bytes.buffer]),
  finish: (id, batches) => callDigest('finish', [id, batches]),
  drop: (id) => void callDigest('drop', [id]).catch(() => undefined),
};

async function fileIn(name) {
  root ??= await navigator.storage.getDirectory();
  return root.getFileHandle(name, { create: true });
}

/** `count` files of `size` bytes: a PNG signature, then bytes that do not compress. */
async function writeAssets(count, size) {
  const handles = [];
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
    handles.push(handle);
  }
  return handles;
}

/**
 * The copy floor of a save, on the same files in the same run: copying them into one file of
 * the same file system (the I/O a save cannot avoid), as a save reads them (blobSource).
 */
async function copyFloor(files) {
  const t = performance.now();
  const out = await (await fileIn('copy.bin')).createWritable();
  for (const file of files) for await (const piece of blobSource(file)) await out.write(piece);
  await out.close();
  return performance.now() - t;
}

/** One SHA-256 pass over the files in WASM (the digest the signature covers). */
async function shaFloor(files, wasm) {
  const t = performance.now();
  const hasher = new wasm.Sha256Hasher();
  for (const file of files) {
    for await (const piece of blobSource(file)) {
      for (let at = 0; at < piece.length; at += 65536) hasher.update(piece.subarray(at, at + 65536));
    }
  }
  hasher.finish();
  hasher.free();
  return performance.now() - t;
}

async function save(files, signer, password, digests, digestElsewhere) {
  const target = await fileIn('project.iki');
  const output = await target.createWritable();
  const t = performance.now();
  const at = {};
  const saved = await saveProject({
    onProgress: (p) => { at[p.phase] ??= performance.now(); },
    snapshot: { name: 'bench', layers: files.map((_, i) => ({ asset: `images/${i}.png` })) },
    assets: files.map((file, i) => ({ name: `images/${i}.png`, data: file, type: 'image/png' })),
    signer, app: 'iki-bench', name: 'bench', canvas: { width: 1920, height: 1080 }, output, digests,
    ...(digestElsewhere ? { fileDigest: new BatchingFileDigester(digestTransport) } : {}),
    ...(password === undefined ? {} : { protection: { password } }),
  });
  const kdfMs = at['deriving-key'] === undefined ? 0 : (at.writing ?? at['deriving-key']) - at['deriving-key'];
  return { ms: performance.now() - t, kdfMs, bytes: saved.bytes, target };
}

const fresh = (handles) => Promise.all(handles.map((h) => h.getFile()));

/**
 * The bench drives one step at a time (bench.mjs reads the browser's CPU time around each):
 * `prepare` writes the assets and hashes them as when they are picked; `copy` is the copy floor;
 * `save` is the page's flow (the digests remembered at the pick, the files posted anew: new
 * File objects of the same identity, each digest checked on the bytes written); `cold` saves
 * with nothing remembered (every asset read twice); `sha` is one SHA-256 pass in WASM; `open`
 * opens the last file saved; `cleanup` removes the files.
 */
const state = {};
const steps = {
  async prepare({ count, size, password, digestElsewhere }) {
    const wasm = await loadWasm();
    const pair = await crypto.subtle.generateKey({ name: 'Ed25519' }, false, ['sign', 'verify']);
    Object.assign(state, { wasm, password, digestElsewhere: digestElsewhere !== false, handles: await writeAssets(count, size), signer: await cryptoKeySigner(pair), digests: new AssetDigests() });
    const t = performance.now();
    await state.digests.remember(await fresh(state.handles));
    return { ms: performance.now() - t };
  },
  async copy() {
    return { ms: await copyFloor(await fresh(state.handles)) };
  },
  async save() {
    const before = state.digests.hashes;
    state.last = await save(await fresh(state.handles), state.signer, state.password, state.digests, state.digestElsewhere);
    return { ms: state.last.ms, kdfMs: state.last.kdfMs, bytes: state.last.bytes, hashed: state.digests.hashes - before };
  },
  async cold() {
    return { ms: (await save(await fresh(state.handles), state.signer, state.password, new AssetDigests(), state.digestElsewhere)).ms };
  },
  async sha() {
    return { ms: await shaFloor(await fresh(state.handles), state.wasm) };
  },
  async open() {
    const file = await state.last.target.getFile();
    const t = performance.now();
    const opened = await openIki(file, state.password === undefined ? {} : { password: state.password });
    const ms = performance.now() - t;
    opened.close();
    return { ms, verdict: opened.verdict.kind };
  },
  async cleanup() {
    for await (const name of root.keys()) await root.removeEntry(name);
    return {};
  },
};

self.onmessage = async (e) => {
  try {
    self.postMessage(await steps[e.data.step](e.data));
  } catch (error) {
    self.postMessage({ error: `${error?.name}: ${error?.message}` });
  }
};
