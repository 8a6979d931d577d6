// @ts-check
/**
 * The iki side of the benchmark: the TS API from ts/dist (make build) and the raw exports of
 * the same WebAssembly instance (pkg/iki_wasm.js, crates/iki-wasm/src/bench.rs). ts/dist
 * loads the module; importing the glue by the same URL gives that very instance.
 *
 * IKI_BENCH_WASM=path loads another build of the module with pkg/'s glue instead (a build
 * variant with the same exports; bench/ab.mjs uses it to compare builds).
 */
import { readFileSync } from 'node:fs';

const override = process.env.IKI_BENCH_WASM;
const file = override ? new URL(override, `file://${process.cwd()}/`) : new URL('../../pkg/iki_wasm_bg.wasm', import.meta.url);

export const api = await import('../../ts/dist/index.js');
await api.loadWasm(override ? readFileSync(file) : undefined);
export const glue = await import('../../pkg/iki_wasm.js');

/** Size of the module in bytes. */
export const wasmBytes = readFileSync(file).length;
/** Which module was loaded. */
export const wasmFile = override ?? 'pkg/iki_wasm_bg.wasm';
