#!/usr/bin/env node
// Builds the npm tarball of the `iki` CLI that the service serves at GET /downloads/iki-cli.tgz
// (make build; issue 12 item 2), so a user installs it from the service they use, on a
// machine without this repository and without the public registry:
//
//   npm install -g https://<service>/downloads/iki-cli.tgz
//
// The tarball is self-contained: esbuild bundles the compiled CLI (ts/dist/cli/main.js) with
// the WebAssembly glue and every dependency into one ES module (and `iki pack`'s deflate worker
// thread into a second one beside it, dist/cli/deflate-worker.js), and the `.wasm` goes beside
// them where `wasm.ts` looks for it (`../../pkg/iki_wasm_bg.wasm` from `dist/cli/`). Its
// package.json declares no dependency, so npm installs it without reaching any registry.
//
//   server/dist/downloads/iki-cli.tgz    the tarball (package/ prefix, as `npm pack` makes)
//   server/dist/downloads/iki-cli.json   {name, version, bytes, sha256} the route answers with
//
// Entries are written in a fixed order with fixed owner and time, so the same inputs give the
// same bytes. Both files are written beside the old ones and renamed into place (lib/tarball.mjs).
import { chmod, copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { writeTarball } from './lib/tarball.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, 'server/dist/downloads');
const core = JSON.parse(await readFile(join(root, 'ts/package.json'), 'utf8'));

const manifest = {
  name: '@iki/cli',
  version: core.version,
  description: 'The iki command line: keys, packing model and project folders into signed containers, inspecting, unpacking, watermarks',
  license: core.license,
  type: 'module',
  engines: core.engines,
  bin: { iki: 'dist/cli/main.js' },
  files: ['dist', 'pkg', 'README.md'],
};

const readme = `# iki CLI ${core.version}

Installed from an iki licensing service (\`GET /downloads/iki-cli.tgz\`); self-contained (the
WebAssembly core and every dependency are inside), Node.js 20 or later.

    iki --help
    iki keygen -o seller.key
    iki register-key --key seller.key --service <service URL> --email <you>
    iki pack ./my-model --key seller.key --service <service URL> -o my-model.ikm

\`iki serve\` needs the service itself and is not part of this package.
`;

const started = Date.now();
const stage = await mkdtemp(join(tmpdir(), 'iki-cli-tgz-'));
try {
  const pkg = join(stage, 'package');
  await mkdir(join(pkg, 'dist/cli'), { recursive: true });
  await mkdir(join(pkg, 'pkg'), { recursive: true });
  await build({
    entryPoints: [join(root, 'ts/dist/cli/main.js'), join(root, 'ts/dist/cli/deflate-worker.js')],
    outdir: join(pkg, 'dist/cli'),
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    // A bundled CommonJS dependency may call require(); give the module one.
    banner: { js: "import { createRequire as __ikiRequire } from 'node:module'; const require = __ikiRequire(import.meta.url);" },
    legalComments: 'none',
    logLevel: 'error',
    absWorkingDir: root,
  });
  await chmod(join(pkg, 'dist/cli/main.js'), 0o755);
  await copyFile(join(root, 'pkg/iki_wasm_bg.wasm'), join(pkg, 'pkg/iki_wasm_bg.wasm'));
  await writeFile(join(pkg, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  await writeFile(join(pkg, 'README.md'), readme);
  const info = await writeTarball(stage, out, 'iki-cli', manifest);
  console.log(`cli: server/dist/downloads/iki-cli.tgz ${manifest.name}@${manifest.version}, `
    + `${Math.round(info.bytes / 1024)} KiB in ${Date.now() - started} ms`);
} finally {
  await rm(stage, { recursive: true, force: true });
}
