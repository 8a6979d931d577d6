/**
 * `GET /downloads/iki-cli.tgz`: the service's own `iki` CLI as an npm tarball
 * (scripts/build-cli-tarball.mjs, run by `make build`), so the commands the pages show work on
 * a machine without the repository and without the public npm registry:
 * `npm install -g <service>/downloads/iki-cli.tgz`. The version is in `X-Iki-Cli-Version` and
 * in the suggested file name (`iki-cli-<version>.tgz`); the body's SHA-256 in `ETag`.
 */
import { createReadStream } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import { ApiError } from '../errors.js';
import type { RouteDef } from './http.js';
import { noneMatch } from './licenses.js';

/** The path the pages print. */
export const CLI_TARBALL_PATH = '/downloads/iki-cli.tgz';

/** What the build writes beside the tarball. */
interface TarballInfo { name: string; version: string; bytes: number; sha256: string }

/** `server/dist/downloads`, from src/routes (tests) and dist/routes alike. */
const DEFAULT_DIR = fileURLToPath(new URL('../../dist/downloads', import.meta.url));

async function tarballInfo(dir: string): Promise<TarballInfo | undefined> {
  try {
    const info = JSON.parse(await readFile(join(dir, 'iki-cli.json'), 'utf8')) as TarballInfo;
    const { size } = await stat(join(dir, 'iki-cli.tgz'));
    // A tarball rebuilt between the two reads would not match its facts: refuse rather than mislabel.
    return size === info.bytes && /^[0-9a-f]{64}$/.test(info.sha256) ? info : undefined;
  } catch {
    return undefined;
  }
}

/** The download route; `dir` holds `iki-cli.tgz` and `iki-cli.json`. */
export function downloadRoutes(dir: string = DEFAULT_DIR): RouteDef[] {
  return [{
    method: 'get', path: CLI_TARBALL_PATH, auth: false,
    async handler(req, res) {
      const info = await tarballInfo(dir);
      if (info === undefined) throw new ApiError('NOT_FOUND', 'the CLI tarball is not built on this service (make build)');
      const etag = `"${info.sha256}"`;
      res.setHeader('Cache-Control', 'no-cache');
      res.setHeader('ETag', etag);
      res.setHeader('X-Iki-Cli-Version', info.version);
      res.setHeader('Content-Disposition', `attachment; filename="iki-cli-${info.version}.tgz"`);
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
        await pipeline(createReadStream(join(dir, 'iki-cli.tgz')), res);
      } catch (err) {
        if (res.destroyed) return;
        throw err;
      }
    },
  }];
}
