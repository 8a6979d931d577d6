// A deflate worker of the export bench: `deflateChunk` of @iki/core (deflate-chunk.ts) on the
// chunks worker.js sends, with its own WASM instance. The seller page's deflate workers run
// the same function behind the worker RPC (deflate-pool.ts); this one answers plain messages
// because the bench serves ts/dist unbundled (no comlink).
import { loadWasm } from '/ts/dist/wasm.js';
import { deflateChunk } from '/ts/dist/deflate-chunk.js';

const ready = loadWasm();
self.onmessage = async ({ data: { id, raw, options } }) => {
  await ready;
  try {
    const chunk = deflateChunk(raw, options);
    self.postMessage({ id, chunk }, [chunk.buffer]);
  } catch (error) {
    self.postMessage({ id, error: `${error?.code ?? error?.name}: ${error?.message}` });
  }
};
