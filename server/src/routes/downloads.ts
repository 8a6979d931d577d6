/**
 * The npm tarballs the service serves, built by `make build`, so they install on a machine
 * without the repository and without the public npm registry:
 *
 * - `GET /downloads/iki-cli.tgz`: the `iki` CLI (scripts/build-cli-tarball.mjs),
 *   `npm install -g <service>/downloads/iki-cli.tgz`; its version in `X-Iki-Cli-Version`;
 * - `GET /downloads/iki-core.tgz`: `@iki/core`'s browser entry, the library an app embeds to
 *   open license copies (scripts/build-core-tarball.mjs; issue 25 item 3); `X-Iki-Core-Version`.
 *
 * The version is also in the suggested file name (`iki-cli-<version>.tgz`), the body's SHA-256
 * in `ETag`.
 */
import { createReadStream } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import { ApiError } from '../errors.js';
import type { RouteDef } from './http.js';
import { noneMatch } from './licenses.js';

/** The paths the pages print. */
export const CLI_TARBALL_PATH = '/downloads/iki-cli.tgz';
export const CORE_TARBALL_PATH = '/downloads/iki-core.tgz';

/** One served tarball: `<base>.tgz` and `<base>.json` in the downloads directory. */
interface Download { path: string; base: string; versionHeader: string; what: string }

const DOWNLOADS: readonly Download[] = [
  { path: CLI_TARBALL_PATH, base: 'iki-cli', versionHeader: 'X-Iki-Cli-Version', what: 'the CLI tarball' },
  { path: CORE_TARBALL_PATH, base: 'iki-core', versionHeader: 'X-Iki-Core-Version', what: 'the @iki/core browser tarball' },
];

/** What the build writes beside the tarball. */
interface TarballInfo { name: string; version: string; bytes: number; sha256: string }

/** `server/dist/downloads`, from src/routes (tests) and dist/routes alike. */
const DEFAULT_DIR = fileURLToPath(new URL('../../dist/downloads', import.meta.url));

async function tarballInfo(dir: string, base: string): Promise<TarballInfo | undefined> {
  try {
    const info = JSON.parse(await readFile(join(dir, `${base}.json`), 'utf8')) as TarballInfo;
    const { size } = await stat(join(dir, `${base}.tgz`));
    // A tarball rebuilt between the two reads would not match its facts: refuse rather than mislabel.
    return size === info.bytes && /^[0-9a-f]{64}$/.test(info.sha256) ? info : undefined;
  } catch {
    return undefined;
  }
}

/** The download routes; `dir` holds `<base>.tgz` and `<base>.json` of each. */
export function downloadRoutes(dir: string = DEFAULT_DIR): RouteDef[] {
  return DOWNLOADS.map((download): RouteDef => ({
    method: 'get', path: download.path, auth: false,
    async handler(req, res) {
      const info = await tarballInfo(dir, download.base);
      if (info === undefined) throw new ApiError('NOT_FOUND', `${download.what} is not built on this service (make build)`);
      const etag = `"${info.sha256}"`;
      res.setHeader('Cache-Control', 'no-cache');
      res.setHeader('ETag', etag);
      res.setHeader(download.versionHeader, info.version);
      res.setHeader('Content-Disposition', `attachment; filename="${download.base}-${info.version}.tgz"`);
      // `*`, a weak tag and a list match as they do for license copies (RFC 9110 §13.1.2).
      if (noneMatch(req.get('if-none-match'), etag)) {
        res.status(304).end();
        return;
      }
      res.status(200).setHeader('Content-Type', 'application/gzip');
      res.setHeader('Content-Length', String(info.bytes));
      if (req.method === 'HEAD') {
        res.end();
        return;
      }
      try {
        await pipeline(createReadStream(join(dir, `${download.base}.tgz`)), res);
      } catch (err) {
        if (res.destroyed) return;
        throw err;
      }
    },
  }));
}
