// The CLI's saved session (issue 14 item 1) and file-password strength (issue 14 item 2)
// against a real licensing service (server/src `serve()`, embedded storage): `iki login` keeps
// the session in a mode-0600 file, later commands use and refresh it, a file others may read
// is refused, `iki logout` ends the session on the service; `iki pack` refuses a weak password
// unless told otherwise.
import { chmod, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { writeProjectFolder } from '../../tests/fixtures/packages.mjs';
import { expectFailure, iki, startService, type LogLine } from './cli-helpers.js';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const PASSWORD = 'correct horse battery staple';

let root: string;
let service: { url: string; close(): Promise<void> };
const logs: LogLine[] = [];
const at = (name: string) => join(root, name);

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'iki-cli-account-'));
  service = await startService(at('data'), logs);
});
afterAll(async () => {
  await service?.close();
  await rm(root, { recursive: true, force: true });
});

async function post(path: string, json: unknown, token?: string): Promise<{ status: number; body: Record<string, any> }> {
  const response = await fetch(`${service.url}${path}`, { method: 'POST', body: JSON.stringify(json),
    headers: { 'content-type': 'application/json', ...(token === undefined ? {} : { authorization: `Bearer ${token}` }) } });
  return { status: response.status, body: (await response.json()) as Record<string, any> };
}

async function verifiedAccount(name: string): Promise<{ email: string; accountId: string }> {
  const email = `${name}-${Math.random().toString(36).slice(2, 8)}@example.com`;
  expect((await post('/api/accounts', { email, password: PASSWORD, name })).status).toBe(202);
  const link = String(logs.filter((l) => l.fields['to'] === email).at(-1)?.fields['link']);
  const verified = await post('/api/accounts/verify', { token: new URL(link).searchParams.get('token'), password: PASSWORD });
  return { email, accountId: String(verified.body['accountId']) };
}

describe('iki login, the session file and iki logout', () => {
  it('keeps the session in a 0600 file, uses and refreshes it, refuses it when others may read it, and logout ends it', async () => {
    const account = await verifiedAccount('lena');
    await writeFile(at('pw.txt'), `${PASSWORD}\n`);
    const env = { IKI_SESSION_FILE: at('cfg/session.json') };
    const login = await iki(['login', '--service', service.url, '--email', account.email, '--password-file', at('pw.txt')], { env });
    expect(login.code, login.err).toBe(0);
    expect(login.out).toContain(`as ${account.email} (account ${account.accountId})`);
    expect((await stat(env.IKI_SESSION_FILE)).mode & 0o777).toBe(0o600);
    expect((await stat(at('cfg'))).mode & 0o777).toBe(0o700);
    const saved = JSON.parse(await readFile(env.IKI_SESSION_FILE, 'utf8')) as Record<string, any>;
    expect(saved).toMatchObject({ version: 1, accountId: account.accountId, refreshToken: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/) });
    expect(JSON.stringify(saved)).not.toContain(PASSWORD);

    // A later command signs in with the file: no --email, no --token, no password asked.
    const listed = await iki(['keys', 'list', '--service', service.url, '--json'], { env });
    expect(listed.code, listed.err).toBe(0);
    expect(JSON.parse(listed.out)).toMatchObject({ accountId: account.accountId, keys: [] });
    // The service lists the CLI's session with its device name.
    const sessions = await fetch(`${service.url}/api/sessions`, { headers: { authorization: `Bearer ${saved['accessToken']}` } })
      .then((r) => r.json()) as { sessions: { device: string }[] };
    expect(sessions.sessions.map((s) => s.device)).toContainEqual(expect.stringMatching(/^iki CLI on /));

    // An access token about to expire is refreshed and written back (still 0600).
    await writeFile(env.IKI_SESSION_FILE, JSON.stringify({ ...saved, accessExpiresAt: Date.now() }), { mode: 0o600 });
    expect((await iki(['keys', 'list', '--service', service.url], { env })).code).toBe(0);
    const refreshed = JSON.parse(await readFile(env.IKI_SESSION_FILE, 'utf8')) as Record<string, any>;
    expect(refreshed['accessExpiresAt']).toBeGreaterThan(Date.now() + 600_000);
    expect((await stat(env.IKI_SESSION_FILE)).mode & 0o777).toBe(0o600);
    // The refresh replaced the refresh token (issue 22 item 8), and the file holds the new one.
    expect(refreshed['refreshToken']).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(refreshed['refreshToken']).not.toBe(saved.refreshToken);

    // Another service's command does not use this session.
    expectFailure(await iki(['keys', 'list', '--service', 'http://127.0.0.1:9'], { env }), 'NOT_SIGNED_IN');

    // A file others may read is refused, and nothing is sent.
    await chmod(env.IKI_SESSION_FILE, 0o644);
    const loose = await iki(['keys', 'list', '--service', service.url], { env });
    expectFailure(loose, 'INSECURE_SESSION_FILE');
    expect(loose.err).toContain('chmod 600');
    await chmod(env.IKI_SESSION_FILE, 0o600);

    // Logout ends the session on the service and deletes the file.
    const out = await iki(['logout'], { env });
    expect(out.code, out.err).toBe(0);
    await expect(stat(env.IKI_SESSION_FILE)).rejects.toMatchObject({ code: 'ENOENT' });
    expect((await post('/api/sessions/refresh', { refreshToken: refreshed['refreshToken'] })).status).toBe(401);
    const me = await fetch(`${service.url}/api/me`, { headers: { authorization: `Bearer ${refreshed['accessToken']}` } });
    expect(me.status).toBe(401);
    // Without a session file, the command says how to sign in.
    const none = await iki(['keys', 'list', '--service', service.url], { env });
    expectFailure(none, 'USAGE', 2);
    expect(none.err).toContain('iki login');
  });

  it('a session ended on the service (sign out everywhere) makes the next command say to log in again', async () => {
    const account = await verifiedAccount('ivo');
    await writeFile(at('pw2.txt'), `${PASSWORD}\n`);
    const env = { IKI_SESSION_FILE: at('ivo/session.json') };
    expect((await iki(['login', '--service', service.url, '--email', account.email, '--password-file', at('pw2.txt')], { env })).code).toBe(0);
    const saved = JSON.parse(await readFile(env.IKI_SESSION_FILE, 'utf8')) as Record<string, any>;
    expect((await post('/api/sessions/revoke-all', {}, saved['accessToken'])).status).toBe(200);
    await writeFile(env.IKI_SESSION_FILE, JSON.stringify({ ...saved, accessExpiresAt: 0 }), { mode: 0o600 });
    const ended = await iki(['keys', 'list', '--service', service.url], { env });
    expectFailure(ended, 'NOT_SIGNED_IN');
    expect(ended.err).toContain('iki login again');
    await expect(stat(env.IKI_SESSION_FILE)).rejects.toMatchObject({ code: 'ENOENT' });
  });
});

describe('iki pack: file password strength', () => {
  it('refuses a password the estimator finds easy to guess, writes nothing, and takes it with --weak-password and a warning', async () => {
    const project = await writeProjectFolder(at('project'), { blobBytes: 500 });
    expect((await iki(['keygen', '-o', at('k.key')])).code).toBe(0);
    for (const [file, password] of [['weak1.txt', 'a'], ['weak2.txt', 'password123'], ['weak3.txt', 'qwertyuiop']] as const) {
      await writeFile(at(file), `${password}\n`);
      const refused = await iki(['pack', project.dir, '-k', at('k.key'), '-o', at(`${file}.iki`), '--password-file', at(file)]);
      expectFailure(refused, 'WEAK_PASSWORD');
      expect(refused.err, password).toMatch(/easy to guess \(strength [0-2] of 4/);
      expect(refused.err).toContain('--weak-password');
      await expect(stat(at(`${file}.iki`))).rejects.toMatchObject({ code: 'ENOENT' });
    }
    const taken = await iki(['pack', project.dir, '-k', at('k.key'), '-o', at('weak.iki'), '--password-file', at('weak2.txt'), '--weak-password']);
    expect(taken.code, taken.err).toBe(0);
    expect(taken.err).toContain('iki: warning: the password is easy to guess');
    await writeFile(at('strong.txt'), 'violet anchor drizzle quantum\n');
    const strong = await iki(['pack', project.dir, '-k', at('k.key'), '-o', at('strong.iki'), '--password-file', at('strong.txt')]);
    expect(strong.code, strong.err).toBe(0);
    expect(strong.err).not.toContain('warning');
  });
});
