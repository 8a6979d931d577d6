/**
 * Fresh-machine PostgreSQL (issue 13 item 4): the test setup finds the newest installed server
 * under /usr/lib/postgresql, fails the run when there is none (unless IKI_SKIP_PG=1 says to
 * skip on purpose, or DATABASE_URL names a server), and `make setup` installs Debian's
 * postgresql only when no server binary is present.
 */
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { postgresBin, postgresPlan } from './helpers/global-postgres.js';

const SETUP = fileURLToPath(new URL('../../scripts/setup.sh', import.meta.url));
const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

describe('PostgreSQL for the tests', () => {
  it('uses the newest complete installation', async () => {
    const root = await mkdtemp(join(tmpdir(), 'iki-pgroot-'));
    dirs.push(root);
    expect(postgresBin(join(root, 'absent'))).toBeUndefined();
    expect(postgresBin(root)).toBeUndefined();
    for (const [version, files] of [['13', ['initdb', 'pg_ctl']], ['16', ['initdb', 'pg_ctl']], ['17', ['initdb']]] as const) {
      await mkdir(join(root, version, 'bin'), { recursive: true });
      for (const file of files) await writeFile(join(root, version, 'bin', file), '');
    }
    expect(postgresBin(root)).toBe(`${root}/16/bin`);
  });

  it('fails the run without PostgreSQL unless told to skip or given a server', () => {
    expect(postgresPlan({}, undefined)).toEqual({ fail: expect.stringMatching(/make setup.*IKI_SKIP_PG=1/) });
    expect(postgresPlan({ IKI_SKIP_PG: '1' }, undefined)).toEqual({ skip: true });
    expect(postgresPlan({ IKI_SKIP_PG: '1' }, '/usr/lib/postgresql/15/bin')).toEqual({ skip: true });
    expect(postgresPlan({ IKI_SKIP_PG: 'yes' }, undefined)).toHaveProperty('fail');
    expect(postgresPlan({ DATABASE_URL: 'postgres://db/iki' }, undefined)).toEqual({ use: 'postgres://db/iki' });
    expect(postgresPlan({}, '/usr/lib/postgresql/15/bin')).toEqual({ start: '/usr/lib/postgresql/15/bin' });
  });

  it('setup installs Debian\'s postgresql only when no server is found', () => {
    // setup.sh's own functions, with the root-only step recorded instead of run.
    const run = (prelude: string) => execFileSync('bash', ['-c', `set -euo pipefail
      say() { echo "setup: $*"; }; die() { echo "die: $*"; exit 0; }
      as_root() { echo "as_root $*"; }
      eval "$(sed -n '/^have_postgres_server()/,/^}/p;/^postgres_server()/,/^}/p' '${SETUP}')"
      ${prelude}
      postgres_server`], { encoding: 'utf8' });
    expect(run('')).toBe(postgresBin() === undefined ? expect.stringContaining('apt-get install') : '');
    // No server anywhere: apt-get installs postgresql, then the check runs again.
    const missing = run('have_postgres_server() { [ -e /tmp/iki-no-such-file ]; }');
    expect(missing).toContain("installing Debian's postgresql");
    expect(missing).toContain('as_root apt-get install -y -q postgresql');
    expect(missing).toContain('die: postgresql was installed but no initdb was found');
    expect(run('export IKI_SKIP_PG=1; have_postgres_server() { false; }')).toBe('');
  });
});
