// Writes an npm tarball the service serves under /downloads (build-cli-tarball.mjs,
// build-core-tarball.mjs): `<stage>/package/` packed with sorted names, fixed owner, mode and
// time, gzip without a name or time (-n), so the same inputs give the same bytes; beside it
// `<base>.json` ({name, version, bytes, sha256}) that the route answers with. Both are written
// beside the old ones and renamed into place, so a running service never serves half a file.
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * @param {string} stage a directory holding `package/`
 * @param {string} out the downloads directory
 * @param {string} base the file name without `.tgz`
 * @param {{ name: string, version: string }} manifest
 * @returns {Promise<{ name: string, version: string, bytes: number, sha256: string }>}
 */
export async function writeTarball(stage, out, base, manifest) {
  await mkdir(out, { recursive: true });
  const tgz = join(out, `${base}.tgz`);
  const temp = `${tgz}.tmp`;
  execFileSync('bash', ['-c',
    'set -o pipefail; tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 --mode=u+rw,go+r,go-w '
    + '-C "$1" -cf - package | gzip -n -9 > "$2"', 'tar', stage, temp]);
  const bytes = await readFile(temp);
  const info = { name: manifest.name, version: manifest.version, bytes: bytes.length,
    sha256: createHash('sha256').update(bytes).digest('hex') };
  await rename(temp, tgz);
  const json = join(out, `${base}.json`);
  await writeFile(`${json}.tmp`, `${JSON.stringify(info)}\n`);
  await rename(`${json}.tmp`, json);
  return info;
}
