/**
 * The host SHA-256 backend of the WASM core in Node (docs/format.md section 2, "Who computes SHA-256").
 *
 * `node:crypto` hashes about 6x faster than WASM's own SHA-256 on our bench machine, and
 * every hash of the upload check, the license copy and container verification goes through
 * `iki_crypto::hash::Sha256`, so {@link loadWasm} installs these hooks in Node: the core
 * calls `update` with a view of its memory (no copy), used before the call returns.
 * Browsers never reach this module's Node import and keep WASM's SHA-256.
 *
 * Set `IKI_SHA256=wasm` in the environment to keep WASM's SHA-256 in Node too (A/B
 * measurements, tests), or call {@link setHostSha256} at run time.
 */
import type { IkiWasm } from './wasm.js';

/** Named by a variable so that browser bundles keep the import as it is (see wasm.ts). */
const NODE_CRYPTO = 'node:crypto';

/**
 * Messages shorter than this stay in WASM: a host hash costs about 2 µs to set up, what
 * WASM needs for about 512 bytes (bench/RESULTS.md "Hashing backend").
 */
export const HOST_SHA256_MIN_BYTES = 1024;

interface NodeHash {
  update(data: Uint8Array): NodeHash;
  copy(): NodeHash;
  digest(): Uint8Array;
}

/** The hooks `installHostSha256` expects (crates/iki-wasm/src/hash.rs). */
export interface HostSha256Hooks {
  start(): number;
  update(handle: number, bytes: Uint8Array): void;
  fork(handle: number): number;
  finish(handle: number): Uint8Array;
  release(handle: number): void;
}

/** Hooks over `createHash('sha256')`, with live hashes kept by integer handle. */
export function hooksOver(createHash: (algorithm: 'sha256') => NodeHash): HostSha256Hooks {
  const live = new Map<number, NodeHash>();
  let next = 1;
  const put = (hash: NodeHash): number => {
    const handle = next;
    next = next >= 0x7fff_ffff ? 1 : next + 1;
    live.set(handle, hash);
    return handle;
  };
  const get = (handle: number): NodeHash => {
    const hash = live.get(handle);
    if (hash === undefined) throw new Error(`no live sha-256 handle ${handle}`);
    return hash;
  };
  return {
    start: () => put(createHash('sha256')),
    update: (handle, bytes) => {
      get(handle).update(bytes);
    },
    fork: (handle) => put(get(handle).copy()),
    finish: (handle) => {
      const hash = get(handle);
      live.delete(handle);
      return hash.digest();
    },
    release: (handle) => {
      live.delete(handle);
    },
  };
}

function isNode(): boolean {
  const runtime = (globalThis as { process?: { versions?: { node?: unknown } } }).process;
  return typeof runtime?.versions?.node === 'string';
}

function forcedWasm(): boolean {
  const runtime = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process;
  return runtime?.env?.IKI_SHA256 === 'wasm';
}

/**
 * Installs (`true`) or removes (`false`) the `node:crypto` backend in `core`. Outside Node,
 * and in Node with `IKI_SHA256=wasm` when `enabled` is `'auto'`, nothing is installed.
 * Returns whether the backend is installed afterwards.
 */
export async function setHostSha256(core: IkiWasm, enabled: boolean | 'auto'): Promise<boolean> {
  const want = enabled === 'auto' ? isNode() && !forcedWasm() : enabled && isNode();
  if (!want) {
    core.installHostSha256(null, 0);
    return false;
  }
  const { createHash } = (await import(NODE_CRYPTO)) as { createHash(a: 'sha256'): NodeHash };
  core.installHostSha256(hooksOver(createHash), HOST_SHA256_MIN_BYTES);
  return core.hostSha256Installed();
}
