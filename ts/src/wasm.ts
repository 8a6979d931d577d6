/**
 * Loads the iki WebAssembly module once and gives typed access to it.
 *
 * `pkg/` is built by `make wasm` with `wasm-bindgen --target web`, so one
 * glue file and one `.wasm` serve both runtimes: in Node the bytes are read
 * from the file next to the glue and instantiated synchronously; in a
 * browser the glue fetches (and streams) the file. `src/` and `dist/` sit at
 * the same depth, so the relative path to `pkg/` holds for both.
 *
 * In Node the loader also installs `node:crypto` as the core's SHA-256 backend
 * (host-hash.ts); `IKI_SHA256=wasm` or {@link useHostSha256} turns that off.
 */
import * as glue from '../../pkg/iki_wasm.js';
import { IkiError } from './errors.js';
import { setHostSha256 } from './host-hash.js';

/** The module's exports (functions and handle classes), without the loaders. */
export type IkiWasm = Omit<typeof glue, 'default' | 'initSync'>;

/** What {@link loadWasm} accepts instead of the default file location. */
export type WasmSource = URL | BufferSource | WebAssembly.Module;

const DEFAULT_WASM_URL = new URL('../../pkg/iki_wasm_bg.wasm', import.meta.url);

let loading: Promise<IkiWasm> | undefined;
let loaded: IkiWasm | undefined;
let memory: WebAssembly.Memory | undefined;
let compiled: WebAssembly.Module | undefined;

/**
 * Node's file reader, named by a variable: browser bundles (esbuild) then keep the import as
 * it is instead of pulling `node:fs` into a page or worker, and the browser type check
 * (`tsconfig.browser.json`, no Node types) needs no Node declarations. Only reached in Node.
 */
const NODE_FS = 'node:fs/promises';

function isNode(): boolean {
  const runtime = (globalThis as { process?: { versions?: { node?: unknown } } }).process;
  return typeof runtime?.versions?.node === 'string';
}

async function instantiate(source: WasmSource): Promise<void> {
  if (source instanceof URL && source.protocol === 'file:' && isNode()) {
    const { readFile } = (await import(NODE_FS)) as { readFile(path: URL): Promise<Uint8Array<ArrayBuffer>> };
    compiled = await WebAssembly.compile(await readFile(source));
    memory = glue.initSync({ module: compiled }).memory;
  } else if (source instanceof URL) {
    memory = (await glue.default({ module_or_path: source })).memory;
  } else {
    compiled = source instanceof WebAssembly.Module ? source : await WebAssembly.compile(source);
    memory = glue.initSync({ module: compiled }).memory;
  }
}

/**
 * Loads and instantiates the module; later calls return the same instance.
 * A failed load is not cached, so a later call tries again.
 *
 * @param source where to load from; by default `pkg/iki_wasm_bg.wasm`
 *   beside the glue (a file read in Node, a fetch in browsers). Ignored once
 *   the module is loaded.
 */
export function loadWasm(source: WasmSource = DEFAULT_WASM_URL): Promise<IkiWasm> {
  loading ??= instantiate(source).then(
    async () => {
      await setHostSha256(glue, 'auto');
      loaded = glue;
      return glue;
    },
    (error: unknown) => {
      loading = undefined;
      throw error;
    },
  );
  return loading;
}

/**
 * The loaded module. Throws `INVALID_STATE` before {@link loadWasm} has
 * resolved.
 */
export function wasm(): IkiWasm {
  if (loaded === undefined) {
    throw new IkiError('INVALID_STATE', 'the iki WebAssembly module is not loaded; await loadWasm() first');
  }
  return loaded;
}

/**
 * The compiled module this thread instantiated, when it was loaded from a file (Node), bytes or
 * a module; `undefined` before {@link loadWasm} has resolved and after a fetch (browsers). A
 * `WebAssembly.Module` can be posted to worker threads, which then instantiate it with
 * `loadWasm(module)` without compiling it again (`iki pack --jobs`, cli/deflate-pool.ts).
 */
export function wasmModule(): WebAssembly.Module | undefined {
  return loaded === undefined ? undefined : compiled;
}

/**
 * Bytes of linear memory the loaded module holds now (0 before {@link loadWasm} has resolved).
 * WebAssembly memory only grows: this is the module's high-water mark, which a host that runs
 * large jobs reads to decide when to start a fresh instance (the server's worker pool).
 */
export function wasmMemoryBytes(): number {
  return memory?.buffer.byteLength ?? 0;
}

/**
 * Node only: hash with `node:crypto` (`true`, the default there) or with WASM's own SHA-256
 * (`false`), for hashes started from now on. Resolves to whether `node:crypto` is in use;
 * always `false` in browsers. Digests are identical either way.
 */
export function useHostSha256(enabled: boolean): Promise<boolean> {
  return setHostSha256(wasm(), enabled);
}
