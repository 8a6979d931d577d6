#!/usr/bin/env node
// Bundles the web pages and their workers with esbuild (make build-web; `make build` and
// `make serve` run it when a source changed):
//
//   server/web/pages/<name>.ts   -> server/dist/web/<name>.js          (one per page, with the
//                                   chunks it shares with other pages, chunk-<hash>.js, and the
//                                   ones it loads when first used, <module>-<hash>.js)
//   server/web/workers/<name>.ts -> server/dist/web/<name>-worker.js   (one per worker)
//   server/web/service-workers/<name>.ts -> server/dist/web/<name>-sw.js (one per service worker)
//
// each with a source map, ES modules for current browsers, minified. The pages and workers
// import `@iki/core/browser` and `@iki/core/browser/worker` exactly as an editor app would
// (ts/dist must be built first); the WebAssembly glue is bundled into the workers, and the
// `.wasm` itself is not copied: the service serves the very file it uses from pkg/.
//
// Browser bundles must not contain Node-only code: any import of a Node built-in (`node:fs`,
// `path`, ...) fails the build and names the importer. The output is written beside the old
// one and swapped in, so a running service never serves half a build. Type checking is
// `tsc -p server/web/tsconfig.json` (esbuild only strips types).
import { mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import { builtinModules } from 'node:module';
import { basename, dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const web = join(root, 'server/web');
const out = join(root, 'server/dist/web');
const staging = `${out}.tmp`;

/** `.ts` files directly in `dir` (sorted), or none when it does not exist. */
async function sources(dir) {
  try {
    return (await readdir(dir)).filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts')).sort().map((f) => join(dir, f));
  } catch (err) {
    if (err.code === 'ENOENT') return [];
    throw err;
  }
}

const nodeBuiltins = new Set(builtinModules.flatMap((m) => [m, `node:${m}`]));

/** Refuses Node built-ins anywhere in a browser bundle's graph. */
const browserOnly = {
  name: 'browser-only',
  setup(b) {
    b.onResolve({ filter: /^[a-z_:/]+$/ }, (args) => {
      if (!nodeBuiltins.has(args.path) && !args.path.startsWith('node:')) return undefined;
      const from = relative(root, args.importer);
      return { errors: [{ text: `${args.path} is Node-only and cannot go into a browser bundle (imported by ${from})` }] };
    });
  },
};

const pages = await sources(join(web, 'pages'));
const workers = await sources(join(web, 'workers'));
const serviceWorkers = await sources(join(web, 'service-workers'));
if (pages.length === 0) throw new Error('server/web/pages has no page');
const entryPoints = [
  ...pages.map((file) => ({ in: file, out: basename(file, '.ts') })),
  ...workers.map((file) => ({ in: file, out: `${basename(file, '.ts')}-worker` })),
  ...serviceWorkers.map((file) => ({ in: file, out: `${basename(file, '.ts')}-sw` })),
];

const started = Date.now();
await rm(staging, { recursive: true, force: true });
// Pages are split (code that only some views need, such as uPlot for the activity plots, is
// loaded when first used, from `<module>-<hash>.js`; code shared by pages goes to `chunk-<hash>.js`); workers and service workers are one file each,
// since a classic or service worker cannot import chunks lazily.
const common = {
  outdir: staging,
  bundle: true,
  format: 'esm',
  platform: 'browser',
  // What the pages already require: module workers, top-level await, WebAssembly SIMD.
  target: ['es2022', 'chrome111', 'firefox114', 'safari16.4'],
  minify: true,
  sourcemap: 'linked',
  sourcesContent: true,
  legalComments: 'none',
  metafile: true,
  logLevel: 'warning',
  absWorkingDir: root,
  plugins: [browserOnly],
};
const pageEntries = entryPoints.slice(0, pages.length);
const results = await Promise.all([
  build({ ...common, entryPoints: pageEntries, splitting: true, chunkNames: '[name]-[hash]' }),
  build({ ...common, entryPoints: entryPoints.slice(pages.length) }),
]);
const result = { metafile: { outputs: Object.assign({}, ...results.map((r) => r.metafile.outputs)) } };
await mkdir(dirname(out), { recursive: true });
await rm(out, { recursive: true, force: true });
await rename(staging, out);

const sizes = await Promise.all(Object.keys(result.metafile.outputs).filter((f) => f.endsWith('.js'))
  .map(async (f) => `${basename(f)} ${Math.round((await stat(join(out, basename(f)))).size / 1024)} KiB`));
console.log(`web: ${entryPoints.length} bundles in ${relative(root, out)} (${sizes.join(', ')}) in ${Date.now() - started} ms`);
