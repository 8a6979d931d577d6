// The bench's digest worker (issue 28 item 4): hashes the project file for its signature while
// the bench's worker writes it, with its own WASM instance. The project page's is
// server/web/workers/digest.ts (the same DigestHashes behind the page-worker RPC); the bench
// serves ts/dist unbundled, so it speaks plain postMessage.
import { loadWasm } from '/ts/dist/wasm.js';
import { DigestHashes } from '/ts/dist/file-digest.js';

const hashes = new DigestHashes();
const ready = loadWasm();

self.onmessage = async ({ data: { call, args, reply } }) => {
  try {
    await ready;
    const value = await hashes[call](...args);
    // A hashed batch's buffer goes back to the sender for its next batch.
    self.postMessage({ reply, value }, value instanceof Uint8Array ? [value.buffer] : []);
  } catch (error) {
    self.postMessage({ reply, error: `${error?.name}: ${error?.message}` });
  }
};
