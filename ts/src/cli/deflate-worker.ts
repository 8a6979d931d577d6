/**
 * The worker thread of `iki pack`'s deflate pool (deflate-pool.ts): instantiates the WASM
 * module the pool posted (compiled once, in the pool's thread) and answers `{id, raw, options}` with the chunk's raw DEFLATE stream
 * (`deflateChunk`), moving the buffer instead of copying it. It never sees a key.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { deflateChunk } from '../deflate-chunk.js';
import { IkiError } from '../errors.js';
import { loadWasm } from '../wasm.js';
import type { PoolReply, PoolRequest, PoolWorkerData } from './deflate-pool.js';

const port = parentPort;
if (port === null) throw new Error('deflate-worker.js runs as a worker thread of iki pack');
await loadWasm((workerData as PoolWorkerData).module);
port.on('message', (request: PoolRequest) => {
  let reply: PoolReply;
  try {
    const data = deflateChunk(request.raw, request.options);
    reply = { id: request.id, data };
    // data has a buffer of its own (the copy out of WASM).
    port.postMessage(reply, [data.buffer as ArrayBuffer]);
    return;
  } catch (error) {
    reply = { id: request.id, error: { code: error instanceof IkiError ? error.code : 'INVALID_STATE',
      message: error instanceof Error ? error.message : String(error) } };
  }
  port.postMessage(reply);
});
port.postMessage({ id: -1 } satisfies PoolReply);
