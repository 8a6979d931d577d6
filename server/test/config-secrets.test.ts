/** Configuration validation and the root secret's life cycle. */
import { mkdtemp, readFile, readdir, rm, stat, writeFile, chmod } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { hkdfSync } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';
import { loadRootSecret, RootSecret } from '../src/secrets.js';
import { captureLogger, type LogLine } from './helpers/app.js';

/** What DATABASE_URL needs besides the root secret: one public URL and a shared blob store. */
const SHARED = { IKI_PUBLIC_URL: 'http://iki.example', IKI_BLOB_STORE: 'postgres' };

const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});
const tempDir = async () => {
  const dir = await mkdtemp(join(tmpdir(), 'iki-secret-'));
  dirs.push(dir);
  return dir;
};

describe('config', () => {
  it('has the documented defaults', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      port: 8080, dataDir: '.data', databaseUrl: undefined, blobStore: 'fs', accessTokenTtlSeconds: 900,
      releaseLimits: { perLicense: 20, perUser: 120, windowSeconds: 3600 },
      signInLimits: { perAddress: 10, perIp: 50, windowSeconds: 900 },
      mailLimits: { perAddress: 3, perIp: 20, windowSeconds: 3600 },
      bodyLimits: { jsonBytes: 65536, masterBytes: 1024 * 1024 * 1024, imageBytes: 64 * 1024 * 1024 },
      passwordHashing: { memoryKiB: 19456, iterations: 2, parallelism: 1 }, oidc: undefined, mail: undefined,
    });
  });

  it('derives the public URL from the port actually used', () => {
    expect(loadConfig({ IKI_PORT: '9000' }, { port: 9100 }).publicUrl).toBe('http://localhost:9100');
    expect(loadConfig({}).publicUrl).toBe('http://localhost:8080');
  });

  it('reads the environment', () => {
    const config = loadConfig({
      IKI_PORT: '9000', IKI_DATA_DIR: '/var/iki', IKI_RELEASES_PER_LICENSE_PER_HOUR: '5',
      IKI_RELEASES_PER_USER_PER_HOUR: '50', IKI_PUBLIC_URL: 'https://iki.example/', IKI_OIDC_ISSUER: 'https://idp',
      IKI_OIDC_JWKS_URL: 'https://idp/jwks', IKI_MAX_JSON_BYTES: '1024', IKI_SIGN_IN_FAILURES_PER_ADDRESS: '5',
      IKI_SIGN_IN_FAILURES_PER_IP: '200', IKI_SIGN_IN_WINDOW_SECONDS: '3600', IKI_VERIFICATION_MAILS_PER_ADDRESS: '5',
      IKI_MAILS_PER_IP: '100', IKI_MAIL_WINDOW_SECONDS: '7200', IKI_OIDC_AUDIENCE: 'iki', IKI_ALLOW_LOG_MAIL: '1',
    });
    expect(config.mailLimits).toEqual({ perAddress: 5, perIp: 100, windowSeconds: 7200 });
    expect(config).toMatchObject({ port: 9000, dataDir: '/var/iki', publicUrl: 'https://iki.example',
      releaseLimits: { perLicense: 5, perUser: 50 }, signInLimits: { perAddress: 5, perIp: 200, windowSeconds: 3600 }, oidc: { issuer: 'https://idp', jwksUrl: 'https://idp/jwks', audience: 'iki' } });
    expect(config.bodyLimits.jsonBytes).toBe(1024);
  });

  it('lists every problem at once', () => {
    try {
      loadConfig({ IKI_PORT: '70000', IKI_RELEASES_PER_LICENSE_PER_HOUR: '0', IKI_ROOT_SECRET: 'short',
        IKI_OIDC_ISSUER: 'https://idp', IKI_BLOB_STORE: 's3', IKI_PUBLIC_URL: 'ftp://x', IKI_MAX_JSON_BYTES: '1023' });
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as ConfigError).problems).toHaveLength(7);
    }
  });

  it.each([['1', 'at the limit'], ['0', 'just past it']])('release limit %s (%s)', (value) => {
    const read = () => loadConfig({ IKI_RELEASES_PER_LICENSE_PER_HOUR: value });
    if (value === '1') expect(read().releaseLimits.perLicense).toBe(1);
    else expect(read).toThrow(ConfigError);
  });

  it.each([
    ['IKI_SIGN_IN_FAILURES_PER_ADDRESS', 'perAddress', 1, 10000],
    ['IKI_SIGN_IN_FAILURES_PER_IP', 'perIp', 1, 1000000],
    ['IKI_SIGN_IN_WINDOW_SECONDS', 'windowSeconds', 60, 86400],
  ] as const)('%s (%s) takes %i to %i and refuses one past either end', (name, field, min, max) => {
    expect(loadConfig({ [name]: String(min) }).signInLimits[field]).toBe(min);
    expect(loadConfig({ [name]: String(max) }).signInLimits[field]).toBe(max);
    for (const past of [String(min - 1), String(max + 1), '-1', '1e3', 'ten']) {
      expect(() => loadConfig({ [name]: past }), past).toThrow(`${name} must be an integer from ${min} to ${max}`);
    }
  });

  it.each([
    ['IKI_VERIFICATION_MAILS_PER_ADDRESS', 'perAddress', 1, 1000],
    ['IKI_MAILS_PER_IP', 'perIp', 1, 1000000],
    ['IKI_MAIL_WINDOW_SECONDS', 'windowSeconds', 60, 86400],
  ] as const)('%s (%s) takes %i to %i and refuses one past either end', (name, field, min, max) => {
    expect(loadConfig({ [name]: String(min) }).mailLimits[field]).toBe(min);
    expect(loadConfig({ [name]: String(max) }).mailLimits[field]).toBe(max);
    for (const past of [String(min - 1), String(max + 1), '-1', '1e3', 'ten']) {
      expect(() => loadConfig({ [name]: past }), past).toThrow(`${name} must be an integer from ${min} to ${max}`);
    }
  });

  it('IKI_TRUST_PROXY: off by default, hop counts 1 to 10, addresses, subnets and named ranges', () => {
    expect(loadConfig({}).trustProxy).toBe(false);
    expect(loadConfig({ IKI_TRUST_PROXY: 'false' }).trustProxy).toBe(false);
    expect(loadConfig({ IKI_TRUST_PROXY: '1' }).trustProxy).toBe(1);
    expect(loadConfig({ IKI_TRUST_PROXY: '10' }).trustProxy).toBe(10);
    expect(loadConfig({ IKI_TRUST_PROXY: 'loopback, 10.0.0.0/8,fd00::/8, 192.0.2.1, ::1/128, 0.0.0.0/0' }).trustProxy)
      .toEqual(['loopback', '10.0.0.0/8', 'fd00::/8', '192.0.2.1', '::1/128', '0.0.0.0/0']);
    for (const bad of ['0', '11', 'true', 'anything', '10.0.0.0/33', 'fd00::/129', '10.0.0.1/8/2', '10.0.0', 'loopback,', '10.0.0.0/-1']) {
      expect(() => loadConfig({ IKI_TRUST_PROXY: bad }), bad).toThrow(/IKI_TRUST_PROXY must be/);
    }
  });

  it('reads IKI_ROOT_SECRET, DATABASE_URL and IKI_SMTP_URL from a *_FILE instead, trimmed', async () => {
    const dir = await tempDir();
    const secret = Buffer.alloc(32, 3).toString('base64url');
    const files = { root: join(dir, 'root'), db: join(dir, 'db'), smtp: join(dir, 'smtp'), empty: join(dir, 'empty') };
    await writeFile(files.root, `${secret}\n`);
    await writeFile(files.db, 'postgres://iki:pw-in-a-file@db:5432/iki\n');
    await writeFile(files.smtp, 'smtp://mailer:smtp-pw@mail.example:587\n');
    await writeFile(files.empty, '\n');
    const config = loadConfig({ IKI_ROOT_SECRET_FILE: files.root, DATABASE_URL_FILE: files.db, ...SHARED,
      IKI_SMTP_URL_FILE: files.smtp, IKI_MAIL_FROM: 'iki <no-reply@iki.example>' });
    expect(config.rootSecret?.reveal()).toBe(secret);
    expect(config.databaseUrl?.reveal()).toBe('postgres://iki:pw-in-a-file@db:5432/iki');
    expect(config.mail?.smtp.credentials()).toEqual({ user: 'mailer', password: 'smtp-pw' });
    const problems = (env: Record<string, string>) => {
      try {
        loadConfig(env);
        return [];
      } catch (err) {
        return (err as ConfigError).problems;
      }
    };
    expect(problems({ IKI_ROOT_SECRET: secret, IKI_ROOT_SECRET_FILE: files.root }))
      .toEqual(['IKI_ROOT_SECRET and IKI_ROOT_SECRET_FILE are both set; set one']);
    expect(problems({ IKI_ROOT_SECRET_FILE: join(dir, 'missing') })).toEqual(['IKI_ROOT_SECRET_FILE cannot be read (ENOENT)']);
    expect(problems({ IKI_ROOT_SECRET_FILE: files.empty })).toEqual(['IKI_ROOT_SECRET_FILE names an empty file']);
    // A file with a wrong value is checked like the variable, and the message quotes neither.
    const wrong = problems({ IKI_ROOT_SECRET_FILE: files.db });
    expect(wrong).toEqual(['IKI_ROOT_SECRET must be 32 bytes as unpadded base64url (43 characters)']);
  });

  it('never prints the root secret or the database URL', () => {
    const secret = Buffer.alloc(32, 7).toString('base64url');
    const url = 'postgres://iki:db-password-42@db.internal:5432/iki';
    const config = loadConfig({ DATABASE_URL: url, IKI_ROOT_SECRET: secret, ...SHARED });
    expect(config.databaseUrl?.reveal()).toBe(url);
    for (const shown of [JSON.stringify(config), inspect(config, { depth: 9, showHidden: true }), String(config.rootSecret),
      `${config.databaseUrl}`, inspect(config, { depth: 9, customInspect: false, showHidden: true })]) {
      expect(shown).not.toContain(secret);
      expect(shown).not.toContain('db-password-42');
    }
  });

  it('requires a root secret with DATABASE_URL and checks its encoding', () => {
    expect(() => loadConfig({ DATABASE_URL: 'postgres://x' })).toThrow(/IKI_ROOT_SECRET/);
    const secret = Buffer.alloc(32, 1).toString('base64url');
    expect(loadConfig({ DATABASE_URL: 'postgres://x', IKI_ROOT_SECRET: secret, ...SHARED }).rootSecret?.reveal()).toBe(secret);
    expect(() => loadConfig({ IKI_ROOT_SECRET: Buffer.alloc(31).toString('base64url') })).toThrow(ConfigError);
  });
});

describe('root secret', () => {
  it('is generated once with mode 0600 and read back unchanged', async () => {
    const dir = await tempDir();
    const logs: LogLine[] = [];
    const first = await loadRootSecret(undefined, dir, captureLogger(logs));
    const text = await readFile(join(dir, 'root.key'), 'utf8');
    expect((await stat(join(dir, 'root.key'))).mode & 0o777).toBe(0o600);
    const second = await loadRootSecret(undefined, dir, captureLogger(logs));
    expect(Buffer.from(second.expose()).toString('base64url')).toBe(text.trim());
    expect(first.expose()).toEqual(second.expose());
    expect(logs.filter((l) => l.message === 'generated a new root secret')).toHaveLength(1);
  });

  it('concurrent first starts end with one secret, none reading a file still being written', async () => {
    for (let round = 0; round < 20; round++) {
      const dir = await tempDir();
      // A reader polling the key file while the starts race: it must only ever see a whole secret.
      const seen = new Set<string>();
      let racing = true;
      const reader = (async () => {
        while (racing) seen.add(await readFile(join(dir, 'root.key'), 'utf8').catch(() => 'absent'));
      })();
      const secrets = await Promise.all(Array.from({ length: 8 }, () => loadRootSecret(undefined, dir, captureLogger([]))));
      racing = false;
      await reader;
      seen.delete('absent');
      expect([...seen].map((text) => text.length)).toEqual([44]);
      for (const secret of secrets) expect(secret.expose()).toEqual(secrets[0]!.expose());
      // Only the key file is left: the staged copies are gone.
      expect(await readdir(dir)).toEqual(['root.key']);
    }
  });

  it('refuses a key file others may read (issue 15 item 14) and a corrupt one', async () => {
    const dir = await tempDir();
    const first = await loadRootSecret(undefined, dir, captureLogger([]));
    for (const mode of [0o644, 0o640, 0o606, 0o620]) {
      await chmod(join(dir, 'root.key'), mode);
      await expect(loadRootSecret(undefined, dir, captureLogger([]))).rejects.toThrow(/chmod 600 .*root\.key/);
    }
    await chmod(join(dir, 'root.key'), 0o600);
    expect((await loadRootSecret(undefined, dir, captureLogger([]))).expose()).toEqual(first.expose());
    await writeFile(join(dir, 'root.key'), 'not a key\n');
    await expect(loadRootSecret(undefined, dir, captureLogger([]))).rejects.toThrow(/root secret/);
  });

  it('prefers the configured secret and never prints it', async () => {
    const bytes = Buffer.alloc(32, 9);
    const secret = await loadRootSecret(bytes.toString('base64url'), await tempDir(), captureLogger([]));
    expect(secret.expose()).toEqual(new Uint8Array(bytes));
    for (const shown of [String(secret), JSON.stringify({ secret }), inspect(secret)]) {
      expect(shown).toContain('redacted');
      expect(shown).not.toContain(bytes.toString('base64url'));
    }
    expect(secret.accessTokenSeed()).toEqual(new Uint8Array(hkdfSync('sha256', bytes, new Uint8Array(0), 'access-token-v1', 32)));
    expect(secret.signInAddressKey()).toEqual(new Uint8Array(hkdfSync('sha256', bytes, new Uint8Array(0), 'sign-in-address-v1', 32)));
    expect(secret.signInAddressKey()).not.toEqual(secret.accessTokenSeed());
    expect(secret.mailAddressKey()).toEqual(new Uint8Array(hkdfSync('sha256', bytes, new Uint8Array(0), 'mail-address-v1', 32)));
    expect(secret.mailAddressKey()).not.toEqual(secret.signInAddressKey());
    secret.destroy();
    expect(secret.expose()).toEqual(new Uint8Array(32));
    expect(() => new RootSecret(new Uint8Array(31))).toThrow(RangeError);
  });
});
