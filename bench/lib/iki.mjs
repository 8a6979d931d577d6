// @ts-check
/**
 * The iki side of the benchmark: the TS API from ts/dist (make build) and the raw exports of
 * the same WebAssembly instance (pkg/iki_wasm.js, crates/iki-wasm/src/bench.rs). ts/dist
 * loads the module; importing the glue by the same URL gives that very instance.
 */
import { readFileSync } from 'node:fs';

export const api = await import('../../ts/dist/index.js');
await api.loadWasm();
export const glue = await import('../../pkg/iki_wasm.js');

/** Size of pkg/iki_wasm_bg.wasm in bytes. */
export const wasmBytes = readFileSync(new URL('../../pkg/iki_wasm_bg.wasm', import.meta.url)).length;
