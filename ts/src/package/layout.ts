/**
 * Where each entry of a package goes when it is unpacked into a folder: the inverse of
 * `readProjectFolder` / `readModelFolder`. Project assets stored at `assets/<sha256>` go back
 * to every name `meta.assetNames` gives them; everything else to its entry path. The
 * manifest comes from a file, so every name is checked again and the layout is refused when
 * two outputs collide or one would need to be both a file and a folder.
 */
import { PackageError } from './errors.js';
import { checkEntryPath } from './paths.js';
import { ASSETS_DIR } from './project.js';

/** The parts of a manifest the layout reads. */
export interface ManifestLike {
  entries: readonly { path: string }[];
  meta: Record<string, unknown>;
}

const SHA256_HEX = /^[0-9a-f]{64}$/u;

/** Whether `path` follows the entry-path rules. */
function validPath(path: string): boolean {
  try {
    checkEntryPath(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * `meta.assetNames` as SHA-256 → names below `assets/`. As docs/format.md §5.1 says, a name
 * that breaks the entry-path rules or points at no entry is ignored (the asset then keeps its
 * `assets/<sha256>` name), and so is an `assetNames` that is not an object: the names are a
 * convenience of iki's writers, not part of the container, and a file is not refused for them.
 */
function assetNamesBySha(manifest: ManifestLike): Map<string, string[]> {
  const byShas = new Map<string, string[]>();
  const names = manifest.meta.assetNames;
  if (typeof names !== 'object' || names === null || Array.isArray(names)) return byShas;
  const stored = new Set(manifest.entries.map((e) => e.path));
  for (const [name, sha] of Object.entries(names as Record<string, unknown>)) {
    if (typeof sha !== 'string' || !SHA256_HEX.test(sha) || !stored.has(`${ASSETS_DIR}/${sha}`)) continue;
    if (!validPath(name) || !validPath(`${ASSETS_DIR}/${name}`)) continue;
    byShas.set(sha, [...(byShas.get(sha) ?? []), `${ASSETS_DIR}/${name}`]);
  }
  return byShas;
}

/** Refuses duplicate outputs and an output that is also a folder of another. */
function checkDisjoint(outputs: string[][]): void {
  const files = new Set<string>();
  for (const path of outputs.flat()) {
    if (files.has(path)) throw new PackageError('BAD_PATH', `two entries would both be written to ${path}`, path);
    files.add(path);
  }
  for (const path of files) {
    const segments = path.split('/');
    for (let i = 1; i < segments.length; i++) {
      const folder = segments.slice(0, i).join('/');
      if (files.has(folder)) throw new PackageError('BAD_PATH', `${folder} would be both a file and a folder`, folder);
    }
  }
}

/**
 * For each manifest entry (by id), the folder-relative paths to write its content to.
 * Throws {@link PackageError} (`BAD_PATH`, `BAD_PROJECT`) on a layout that cannot be written
 * safely.
 */
export function unpackLayout(kind: 'project' | 'model', manifest: ManifestLike): string[][] {
  const names = kind === 'project' ? assetNamesBySha(manifest) : new Map<string, string[]>();
  const outputs = manifest.entries.map(({ path }) => {
    checkEntryPath(path);
    const rest = path.startsWith(`${ASSETS_DIR}/`) ? path.slice(ASSETS_DIR.length + 1) : undefined;
    return (rest !== undefined && names.get(rest)) || [path];
  });
  checkDisjoint(outputs);
  return outputs;
}
