/**
 * The license worker's side of package-png.ts: a texture's stored PNG made in this worker's
 * WASM (crates/iki-wasm stored_png.rs), sent straight to the service worker's port.
 */
import { callWasm } from '../errors.js';
import { wasm } from '../wasm.js';
import type { PngRequest } from './package-png.js';
import type { PackageAnswer } from './package-sw.js';
import type { TaskContext } from './worker-rpc.js';

/**
 * The license worker's task: encodes `request`'s pixels as a stored PNG in this worker's WASM
 * and answers its port (200 `image/png`, the PNG transferred; 500 when the pixels cannot be a
 * PNG). Resolves once answered; never rejects, so a failure reaches the service worker.
 */
export async function answerPngTask(request: PngRequest, _context: TaskContext<never>): Promise<void> {
  const { port } = request;
  const pixels = new Uint8Array(request.pixels);
  let answer: PackageAnswer;
  const transfer: Transferable[] = [];
  try {
    const png = callWasm(() => wasm().pngStored(request.width, request.height, pixels));
    answer = { status: 200, contentType: 'image/png', body: png.buffer as ArrayBuffer };
    transfer.push(png.buffer);
  } catch (err) {
    answer = { status: 500, reason: `the texture could not be encoded: ${err instanceof Error ? err.message : String(err)}` };
  } finally {
    pixels.fill(0);
  }
  port.postMessage(answer, transfer);
  port.close();
}
