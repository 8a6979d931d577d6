// Two projects: `node` runs the library against the Node build of pkg/, and
// `browser` drives Debian's Chromium (playwright-core, never a downloaded
// browser) against the same pkg/ served from localhost. Both need `make
// build` first: the browser page imports ts/dist, and both load pkg/.
import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // vitest's default for `run` is one worker fewer than the cores: one on the 2-core machines
    // `make test` runs on. Two cut the suite from 141 s to 107 s there.
    maxWorkers: 2,
    projects: [
      {
        test: {
          name: 'node',
          environment: 'node',
          include: ['test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, 'test/browser/**'],
          // Copies and identify run whole textures through WASM: seconds on a loaded 2-core
          // machine, past vitest's 5 s default (a test that hangs still fails, at 30 s).
          testTimeout: 30_000,
        },
      },
      {
        test: {
          name: 'browser',
          environment: 'node',
          include: ['test/browser/**/*.test.ts'],
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
    ],
  },
});
