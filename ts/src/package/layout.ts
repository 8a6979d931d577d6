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

/** `meta.assetNames` checked, as SHA-256 → names below `assets/`. */
function assetNamesBySha(manifest: ManifestLike): Map<string, string[]> {
  const byShas = new Map<string, string[]>();
  const names = manifest.meta.assetNames;
  if (names === undefined || names === null) return byShas;
  if (typeof names !== 'object' || Array.isArray(names)) throw new PackageError('BAD_PROJECT', 'meta.assetNames is not an object');
  const stored = new Set(manifest.entries.map((e) => e.path));
  for (const [name, sha] of Object.entries(names as Record<string, unknown>)) {
    checkEntryPath(`${ASSETS_DIR}/${name}`);
    if (typeof sha !== 'string' || !SHA256_HEX.test(sha) || !stored.has(`${ASSETS_DIR}/${sha}`)) {
      throw new PackageError('BAD_PROJECT', `meta.assetNames names ${JSON.stringify(name)} for an asset the package does not hold`, name);
    }
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
