/**
 * A texture's PNG for the package URLs, made in the license worker (issue 25 item 1). The
 * page that opened a copy gets the service worker's request with a `MessagePort`
 * (package-sw.ts); for a texture it hands that port and a copy of the pixels (both
 * transferred, not cloned) to the license worker, whose WASM instance encodes the stored PNG
 * (crates/iki-wasm stored_png.rs) and answers the service worker directly. The page's main
 * thread only copies the pixels once; the PNG is made once, in a fresh buffer that is
 * transferred to the service worker and lives only in its response. The pixel copy is
 * zero-filled once it is a PNG.
 *
 * This module holds what the page needs (no WASM); the worker's task is package-png-task.ts.
 */

/** One texture to answer: its pixels (a copy, transferred) and the service worker's port. */
export interface PngRequest {
  width: number;
  height: number;
  /** `width * height * 4` bytes of straight RGBA8, rows top to bottom (zero-filled once used). */
  pixels: ArrayBuffer;
  /** Where the service worker waits for the answer (a `PackageAnswer`, package-sw.ts). */
  port: MessagePort;
}

/** Hands one texture to whatever encodes it and answers `request.port`; must not throw. */
export type PngEncoder = (request: PngRequest) => void;

/** The list of what {@link PngRequest} transfers. */
export function pngTransfers(request: PngRequest): Transferable[] {
  return [request.pixels, request.port];
}
