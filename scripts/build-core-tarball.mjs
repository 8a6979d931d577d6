#!/usr/bin/env node
// Builds `@iki/core`'s browser entry as the npm tarball the service serves at
// GET /downloads/iki-core.tgz (make build; issue 25 item 3), the library an app embeds to
// open license copies, as the player page does:
//
//   dist/iki-core.js          @iki/core/browser as one ES module (no dependency left to install)
//   dist/license-worker.js    the player's Web Worker (module worker: exposeTasks(licenseTasks))
//   dist/package-sw.js        the package URLs' service worker (servePackageUrls(self))
//   dist/iki_wasm_bg.wasm     the WebAssembly module the worker instantiates
//   types/                    the .d.ts files of ts/dist (the entry's is types/browser/index.d.ts)
//
// The app serves these files from its own origin (workers and service workers must be
// same-origin with the page) and calls the service's API, on its origin or another one that
// lists the app in IKI_CORS_ORIGINS. Written by lib/tarball.mjs, with
// server/dist/downloads/iki-core.json ({name, version, bytes, sha256}) beside it.
import { copyFile, cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { writeTarball } from './lib/tarball.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, 'server/dist/downloads');
const core = JSON.parse(await readFile(join(root, 'ts/package.json'), 'utf8'));
const browserDist = join(root, 'ts/dist/browser');

const manifest = {
  name: '@iki/core',
  version: core.version,
  description: 'iki player library for browsers: open license copies in memory, load them by URL, from an iki licensing service',
  license: core.license,
  type: 'module',
  sideEffects: true,
  types: './types/browser/index.d.ts',
  exports: {
    '.': { types: './types/browser/index.d.ts', default: './dist/iki-core.js' },
    './license-worker.js': './dist/license-worker.js',
    './package-sw.js': './dist/package-sw.js',
    './iki_wasm_bg.wasm': './dist/iki_wasm_bg.wasm',
    './package.json': './package.json',
  },
  files: ['dist', 'types', 'README.md'],
};

const readme = `# @iki/core ${core.version} (browser)

Installed from an iki licensing service (\`GET /downloads/iki-core.tgz\`). Serve \`dist/\` from
your app's origin; the guide is "Embed the player" (docs/embed.md in the iki repository).

    import { ApiClient, LicensePlayer, PackageUrls } from '@iki/core';

- \`dist/iki-core.js\`: the page's API (ES module, top-level await).
- \`dist/license-worker.js\`: the player's module worker (\`LicensePlayer\`'s \`workerUrl\`).
- \`dist/package-sw.js\`: the package URLs' service worker (\`PackageUrls.register\`).
- \`dist/iki_wasm_bg.wasm\`: the WebAssembly module (\`LicensePlayer\`'s \`wasmUrl\`).
`;

/** One ES module bundle for browsers; `contents` is its entry's source. */
async function bundle(contents, outfile) {
  await build({
    // The entry's name must not be one of ts/dist/browser's files, or it would import itself.
    stdin: { contents, resolveDir: browserDist, sourcefile: `entry-${outfile.split('/').at(-1)}` },
    outfile, bundle: true, format: 'esm', platform: 'browser',
    target: ['es2022', 'chrome111', 'firefox114', 'safari16.4'], legalComments: 'none', logLevel: 'error', absWorkingDir: root,
  });
}

const started = Date.now();
const stage = await mkdtemp(join(tmpdir(), 'iki-core-tgz-'));
try {
  const pkg = join(stage, 'package');
  await mkdir(join(pkg, 'dist'), { recursive: true });
  await bundle("export * from './index.js';", join(pkg, 'dist/iki-core.js'));
  await bundle("import { exposeTasks, licenseTasks } from './worker.js';\nexposeTasks(licenseTasks);\n", join(pkg, 'dist/license-worker.js'));
  await bundle("import { servePackageUrls } from './service-worker.js';\nservePackageUrls(self);\n", join(pkg, 'dist/package-sw.js'));
  await copyFile(join(root, 'pkg/iki_wasm_bg.wasm'), join(pkg, 'dist/iki_wasm_bg.wasm'));
  // The declarations, without the CLI's (the browser entry's types refer to their siblings).
  await cp(join(root, 'ts/dist'), join(pkg, 'types'), {
    recursive: true,
    filter: (src) => !src.includes('/ts/dist/cli') && (!/\.[a-z]+$/.test(src) || src.endsWith('.d.ts')),
  });
  await writeFile(join(pkg, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  await writeFile(join(pkg, 'README.md'), readme);
  const info = await writeTarball(stage, out, 'iki-core', manifest);
  console.log(`core: server/dist/downloads/iki-core.tgz ${manifest.name}@${manifest.version}, `
    + `${Math.round(info.bytes / 1024)} KiB in ${Date.now() - started} ms`);
} finally {
  await rm(stage, { recursive: true, force: true });
}
