/**
 * Where the pages find what the build put beside them (server/src/routes/web.ts serves these
 * paths): worker bundles under `/assets/js/`, and the one `.wasm` the service itself loads
 * (`pkg/`), which every worker instantiates for itself.
 */

/** The service's WebAssembly module. */
export const WASM_URL = '/assets/pkg/iki_wasm_bg.wasm';

/** The bundle of `server/web/workers/<name>.ts`. */
export function workerUrl(name: string): string {
  return `/assets/js/${name}-worker.js`;
}
