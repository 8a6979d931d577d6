/**
 * An opened project, whatever it was read from (a project file or a legacy `.rigproj`
 * bundle): the verdict first, then meta, the snapshot and the list of assets, each asset read
 * one at a time from the source when asked for, so memory holds only what the app keeps.
 *
 * A file modified after it was signed shows nothing of its content until the app called
 * `acknowledge()` after showing the warning (SPEC "Errors": shown as modified after it was
 * signed). The project opens as a new, unsaved project: `toSave()` gives what `saveProject`
 * takes, so saving signs again with the current key, and assets stream from the opened
 * source without being held.
 */
import type { ByteSource } from '../streams.js';
import type { AssetSource, ProjectAsset } from './assets.js';
import { ProjectError } from './errors.js';
import type { Verdict } from './verdict.js';

/** One asset of an opened project. */
export interface AssetInfo {
  /** Its name (below `assets/`); the content hash when the file kept no name. */
  name: string;
  /** Its path in the file (`assets/<sha256>`, or the bundle's own path). */
  path: string;
  type: string;
  size: number;
  /** Lowercase hex SHA-256, when the file records it. */
  sha256?: string;
  /** Its content failed a check in a file shown as modified. */
  damaged: boolean;
}

/** The project meta as opened (docs/format.md section 5.1). */
export interface OpenedMeta {
  name: string;
  canvas: { width: number; height: number };
  savedAt?: string;
  app?: string;
}

/** Reads assets from the opened source. */
export interface AssetBackend {
  /** A fresh stream of the asset's checked bytes. */
  open(asset: AssetInfo): ByteSource;
  /** Releases what the backend holds (a content key in WASM). */
  close(): void;
}

/** Largest asset {@link OpenedProject.readAsset} returns whole: 512 MiB (stream larger ones with `assetSource`). */
export const MAX_READ_ASSET_BYTES = 512 * 1024 * 1024;

/** The result of opening a project. */
export class OpenedProject {
  #acknowledged = false;
  #closed = false;

  constructor(
    /** `iki` for a project file, `rigproj` for a legacy bundle (read only). */
    readonly source: 'iki' | 'rigproj',
    readonly verdict: Verdict,
    readonly meta: OpenedMeta,
    readonly assets: readonly AssetInfo[],
    readonly encrypted: boolean,
    private readonly snapshotValue: Record<string, unknown> | undefined,
    private readonly backend: AssetBackend,
    /** The key service's certificate key fetched while deciding the verdict, to keep as last known. */
    readonly fetchedIssuer?: Uint8Array,
  ) {}

  /** Whether the content may be shown: always, except for a modified file before `acknowledge()`. */
  get acknowledged(): boolean {
    return this.verdict.kind !== 'modified' || this.#acknowledged;
  }

  /** The user saw the "modified after it was signed" warning and chose to look anyway. */
  acknowledge(): void {
    this.#acknowledged = true;
  }

  private gate(): void {
    if (this.#closed) throw new ProjectError('NOT_ACKNOWLEDGED', 'the project was closed');
    if (!this.acknowledged) {
      throw new ProjectError('NOT_ACKNOWLEDGED', 'the file was modified after it was signed; show the warning and call acknowledge() first');
    }
  }

  /** The snapshot, a fresh JSON object each time; `BAD_SNAPSHOT` when it was damaged. */
  snapshot(): Record<string, unknown> {
    this.gate();
    if (this.snapshotValue === undefined) throw new ProjectError('BAD_SNAPSHOT', 'the snapshot is damaged', { reason: 'damaged' });
    return structuredClone(this.snapshotValue);
  }

  /** The asset named `name`. */
  asset(name: string): AssetInfo {
    const found = this.assets.find((a) => a.name === name);
    if (found === undefined) throw new ProjectError('BAD_ASSET', `no asset is named ${JSON.stringify(name)}`, { name, reason: 'unknown' });
    return found;
  }

  /** A re-readable source of the asset's bytes, for streaming or saving again. */
  assetSource(name: string): AssetSource {
    this.gate();
    const asset = this.asset(name);
    if (asset.damaged) throw new ProjectError('ASSET_DAMAGED', `${name} is damaged in this file`, { name });
    return { size: asset.size, ...(asset.sha256 === undefined ? {} : { sha256: asset.sha256 }), open: () => this.backend.open(asset) };
  }

  /** The asset's bytes, read from the file now and checked (at most {@link MAX_READ_ASSET_BYTES}). */
  async readAsset(name: string): Promise<Uint8Array> {
    const source = this.assetSource(name);
    if (source.size > MAX_READ_ASSET_BYTES) {
      throw new ProjectError('BAD_ASSET', `${name} is ${source.size} bytes; stream it with assetSource()`, { name, reason: 'too large' });
    }
    const out = new Uint8Array(source.size);
    let at = 0;
    for await (const piece of source.open() as AsyncIterable<Uint8Array>) {
      if (at + piece.length > out.length) throw new ProjectError('ASSET_DAMAGED', `${name} is longer than its size`, { name });
      out.set(piece, at);
      at += piece.length;
    }
    if (at !== out.length) throw new ProjectError('ASSET_DAMAGED', `${name} is shorter than its size`, { name });
    return out;
  }

  /**
   * What `saveProject` takes to save this as a new project: the snapshot, every undamaged
   * asset under its name (streamed from this source), the name and canvas.
   */
  toSave(): { snapshot: Record<string, unknown>; assets: ProjectAsset[]; name: string; canvas: { width: number; height: number } } {
    const assets = this.assets.filter((a) => !a.damaged).map((a) => ({ name: a.name, type: a.type, data: this.assetSource(a.name) }));
    return { snapshot: this.snapshot(), assets, name: this.meta.name, canvas: { ...this.meta.canvas } };
  }

  /** Releases the source's reader (an encrypted file's content key is zeroized in WASM). */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.backend.close();
  }
}
