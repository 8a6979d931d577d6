// The seller's path through the CLI against a real licensing service (server/src `serve()`
// on an ephemeral port, embedded database in a temp folder, log captured): sign up and
// verify over HTTP, `iki keygen`, `iki register-key`, `iki pack --service --certificate`,
// upload of the .ikm as the OpenAPI document says (201, signed by the seller's key), and the
// refusals with the service's codes and request ids.
import { EventEmitter, once } from 'node:events';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { writeModelPackage, writeProjectFolder, type ModelPackage } from '../../tests/fixtures/packages.mjs';
import { parseCertificate } from '../src/cli/certificate.js';
import type { TtyInput } from '../src/cli/io.js';
import { expectFailure, iki, startService, type LogLine, type Run } from './cli-helpers.js';
import { fetchRequest, keyServiceClient } from '../src/key-service.js';
import { openProject, saveProject } from '../src/project/index.js';
import { registerSigner } from '../src/signer.js';
import { browserSigner } from './project-support.js';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const PASSWORD = 'correct horse battery staple';

let root: string;
let service: { url: string; close(): Promise<void> };
const logs: LogLine[] = [];
let model: ModelPackage;
const at = (name: string) => join(root, name);

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'iki-cli-service-'));
  service = await startService(at('data'), logs);
  model = await writeModelPackage(at('model'));
});
afterAll(async () => {
  await service?.close();
  await rm(root, { recursive: true, force: true });
});

async function call(method: string, path: string, opts: { token?: string; json?: unknown; body?: Uint8Array<ArrayBuffer>; type?: string } = {}) {
  const headers: Record<string, string> = {};
  if (opts.token !== undefined) headers.authorization = `Bearer ${opts.token}`;
  if (opts.json !== undefined) headers['content-type'] = 'application/json';
  if (opts.type !== undefined) headers['content-type'] = opts.type;
  const body = opts.json !== undefined ? JSON.stringify(opts.json) : opts.body;
  const response = await fetch(`${service.url}${path}`, { method, headers, ...(body === undefined ? {} : { body }) });
  return { status: response.status, body: (await response.json()) as Record<string, any> };
}

/** Signs up over HTTP and, unless `verify` is false, verifies with the token of the logged link. */
async function newSeller(name: string, verify = true): Promise<{ email: string; accountId: string }> {
  const email = `${name}-${Math.random().toString(36).slice(2, 8)}@example.com`;
  const created = await call('POST', '/api/accounts', { json: { email, password: PASSWORD, name } });
  expect(created.status).toBe(202);
  if (!verify) return { email, accountId: '' };
  const link = logs.filter((l) => l.fields['to'] === email).at(-1)?.fields['link'];
  const token = new URL(String(link)).searchParams.get('token');
  const verified = await call('POST', '/api/accounts/verify', { json: { token, password: PASSWORD } });
  expect(verified.status).toBe(200);
  return { email, accountId: String(verified.body.accountId) };
}

/** A fake terminal that types `keys` once the prompt starts listening. */
function typingTerminal(keys: string): TtyInput {
  const tty = Object.assign(new EventEmitter(), {
    isTTY: true, isRaw: false,
    setRawMode: (mode: boolean) => void (tty.isRaw = mode),
    setEncoding: () => undefined,
    resume: () => void queueMicrotask(() => tty.emit('data', keys)),
    pause: () => undefined,
  });
  return tty as unknown as TtyInput;
}

/** A local port that was just free and is closed now. */
async function closedPort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const json = (run: Run) => JSON.parse(run.out) as Record<string, any>;

describe('a seller registers a key with the CLI and uploads a master packed for the service', () => {
  let seller: { email: string; accountId: string };
  beforeAll(async () => {
    seller = await newSeller('sela');
    await writeFile(at('password.txt'), `${PASSWORD}\n`);
  });

  it('keygen, register-key, pack --service --certificate, upload: 201 signed by the seller\'s key', async () => {
    const made = await iki(['keygen', '-o', at('seller.key'), '--json']);
    expect(made.code, made.err).toBe(0);
    const publicKey = String(json(made).publicKey);

    const registered = await iki(['register-key', '--key', at('seller.key'), '--service', service.url,
      '--email', seller.email, '--password-file', at('password.txt'), '--name', 'test laptop', '--json'], { env: {} });
    expect(registered.code, registered.err).toBe(0);
    expect(json(registered)).toEqual({ accountId: seller.accountId, publicKey, certificateFile: at('seller.key.cert') });
    const text = await readFile(at('seller.key.cert'), 'utf8');
    expect(text).toMatch(/^[A-Za-z0-9_-]+\n$/u);
    expect((await stat(at('seller.key.cert'))).mode & 0o777).toBe(0o644);
    const certificate = parseCertificate(text.trim());
    expect(certificate).toMatchObject({ accountId: seller.accountId, version: 1 });
    const serviceKeys = await call('GET', '/api/keys/service');
    expect('issuerKey' in certificate && Buffer.from(certificate.issuerKey).toString('base64url')).toBe(serviceKeys.body.certificatePublicKey);

    const packed = await iki(['pack', model.dir, '--key', at('seller.key'), '--service', service.url,
      '--certificate', at('seller.key.cert'), '-o', at('master.ikm'), '--json']);
    expect(packed.code, packed.err).toBe(0);
    expect(packed.err).toContain(`sealing for the service at ${service.url} (key ${serviceKeys.body.x25519PublicKey})`);
    expect(json(packed)).toMatchObject({ encrypted: true, recipients: 1, signer: publicKey, account: seller.accountId,
      certificate: at('seller.key.cert') });
    const inspected = json(await iki(['inspect', at('master.ikm'), '--json']));
    expect(inspected.slots).toEqual([expect.objectContaining({ type: 'recipient' })]);
    expect(inspected.signer).toMatchObject({ kind: 'account', account: seller.accountId,
      certificate: { accountId: seller.accountId, subjectMatchesSigner: true } });

    const session = await call('POST', '/api/sessions', { json: { email: seller.email, password: PASSWORD } });
    const upload = await call('POST', '/api/licenses/masters', { token: session.body.accessToken,
      body: new Uint8Array(await readFile(at('master.ikm'))), type: 'application/vnd.iki.model' });
    expect(upload.status, JSON.stringify(upload.body)).toBe(201);
    expect(upload.body).toMatchObject({ name: 'Fixture', signerPublicKey: publicKey, entries: model.files.length });
    const key = await call('GET', `/api/keys/signing/${publicKey}`);
    expect(key.body).toMatchObject({ accountId: seller.accountId, status: 'active' });
    // The public status names no device (issue 15 item 15).
    expect(key.body.name).toBeUndefined();
  });

  it('uses <key>.cert by default and says so; registering again needs --force and renews it with a token', async () => {
    const session = await call('POST', '/api/sessions', { json: { email: seller.email, password: PASSWORD } });
    const token = String(session.body.accessToken);
    expectFailure(await iki(['register-key', '-k', at('seller.key'), '--service', service.url, '--token', token]), 'OUTPUT_EXISTS');
    const again = await iki(['register-key', '-k', at('seller.key'), '--service', `${service.url}/`, '--force'], { env: { IKI_TOKEN: token } });
    expect(again.code, again.err).toBe(0);
    expect(again.out).toContain('already registered (certificate renewed)');
    expect(again.out).toContain(`certificate written to ${at('seller.key.cert')}`);

    const packed = await iki(['pack', model.dir, '-k', at('seller.key'), '--service', service.url, '-o', at('default.ikm')]);
    expect(packed.code, packed.err).toBe(0);
    expect(packed.err).toContain(`signing as account ${seller.accountId} with the certificate ${at('seller.key.cert')}`);
    expect(packed.out).toContain(`for account ${seller.accountId}`);
    const upload = await call('POST', '/api/licenses/masters', { token,
      body: new Uint8Array(await readFile(at('default.ikm'))), type: 'application/vnd.iki.model' });
    expect(upload.status).toBe(201);
  });

  it('asks for the password at the terminal without echo', async () => {
    expect((await iki(['keygen', '-o', at('typed.key')])).code).toBe(0);
    const run = await iki(['register-key', '-k', at('typed.key'), '--service', service.url, '--email', seller.email],
      { env: {}, stdin: typingTerminal(`${PASSWORD}\r`) });
    expect(run.code, run.err).toBe(0);
    expect(run.err).toBe('Password: \n');
    expect(run.out).toContain(`registered: key `);
    expect(parseCertificate((await readFile(at('typed.key.cert'), 'utf8')).trim())).toMatchObject({ accountId: seller.accountId });
  });

  it('refuses a certificate of another key before writing anything', async () => {
    expect((await iki(['keygen', '-o', at('other.key')])).code).toBe(0);
    const run = await iki(['pack', model.dir, '-k', at('other.key'), '--certificate', at('seller.key.cert'), '-o', at('mismatch.ikm')]);
    expectFailure(run, 'BAD_CERTIFICATE');
    expect(run.err).toContain('not the signing key');
    await expect(stat(at('mismatch.ikm'))).rejects.toMatchObject({ code: 'ENOENT' });
  });
});

describe('refusals name the service\'s code and request id', () => {
  it('a wrong password, an unverified account, a bad token, and no service at all', async () => {
    await writeFile(at('wrong.txt'), 'not the password\n');
    expect((await iki(['keygen', '-o', at('r.key')])).code).toBe(0);
    const base = ['register-key', '-k', at('r.key'), '--service', service.url];
    const seller = await newSeller('vera');
    const wrong = await iki([...base, '--email', seller.email, '--password-file', at('wrong.txt')], { env: {} });
    expectFailure(wrong, 'INVALID_CREDENTIALS');
    expect(wrong.err).toMatch(/POST \/api\/sessions: .* \(HTTP 401, request id [\w-]+\); check the e-mail address and password \(no account yet\? sign up at http:\/\/127\.0\.0\.1:\d+\/\)$/mu);

    const unverified = await newSeller('uma', false);
    await writeFile(at('uma.txt'), `${PASSWORD}\n`);
    const refused = await iki([...base, '--email', unverified.email, '--password-file', at('uma.txt')], { env: {} });
    expectFailure(refused, 'EMAIL_NOT_VERIFIED');
    // A sign-up is pending until its link is used: signing in already says to verify first.
    expect(refused.err).toMatch(/POST \/api\/sessions: .*\(HTTP 403, request id [\w-]+\)/u);
    expectFailure(await iki([...base, '--token', 'not-a-token']), 'UNAUTHENTICATED');
    await expect(stat(at('r.key.cert'))).rejects.toMatchObject({ code: 'ENOENT' });

    const nobody = `http://127.0.0.1:${await closedPort()}`;
    const closed = await iki(['register-key', '-k', at('r.key'), '--service', nobody, '--token', 'x']);
    expectFailure(closed, 'SERVICE_UNREACHABLE');
    expect(closed.err).toContain(`cannot reach ${nobody} (ECONNREFUSED); is the service running, and is --service the address you open its pages at?`);
    expectFailure(await iki(['pack', model.dir, '-k', at('r.key'), '--service', nobody, '-o', at('x.ikm')]), 'SERVICE_UNREACHABLE');
    await expect(stat(at('x.ikm'))).rejects.toMatchObject({ code: 'ENOENT' });
    expectFailure(await iki([...base, '--email', 'a@b.c', '--token', 'x']), 'USAGE', 2);
    expectFailure(await iki(base, { env: {} }), 'USAGE', 2);
    expectFailure(await iki(['register-key', '-k', at('r.key'), '--service', 'ftp://x', '--token', 'x']), 'USAGE', 2);
  });
});

describe('project files for an account, and the signer\'s verdict', () => {
  let owner: { email: string; accountId: string };
  let other: { email: string; accountId: string };
  let project: string;
  const signIn = (who: { email: string }) => ['--email', who.email, '--account-password-file', at('password.txt')];
  beforeAll(async () => {
    owner = await newSeller('olga');
    other = await newSeller('otto');
    await writeFile(at('password.txt'), `${PASSWORD}\n`);
    project = (await writeProjectFolder(at('project'), { blobBytes: 5000 })).dir;
    expect((await iki(['keygen', '-o', at('olga.key')])).code).toBe(0);
    const registered = await iki(['register-key', '-k', at('olga.key'), '--service', service.url, '--email', owner.email,
      '--password-file', at('password.txt')], { env: {} });
    expect(registered.code, registered.err).toBe(0);
  });

  it('pack --account: opens for its account only, naming it to anyone else; verify gives the verdict', async () => {
    const packed = await iki(['pack', project, '-k', at('olga.key'), '-o', at('olga.iki'), '--account', service.url, ...signIn(owner), '--json'], { env: {} });
    expect(packed.code, packed.err).toBe(0);
    expect(json(packed)).toMatchObject({ encrypted: true, accountSlot: owner.accountId, account: owner.accountId });
    const inspected = json(await iki(['inspect', at('olga.iki'), '--json'], { env: {} }));
    expect(inspected.slots).toEqual([expect.objectContaining({ type: 'account', accountId: owner.accountId })]);
    expect(inspected.verdict).toMatchObject({ kind: 'device', unverifiedAccount: { accountId: owner.accountId } });

    const signedOut = await iki(['unpack', at('olga.iki'), '-o', at('out-none')], { env: {} });
    expectFailure(signedOut, 'SIGN_IN_REQUIRED');
    expect(signedOut.err).toContain(owner.accountId);
    const stranger = await iki(['verify', at('olga.iki'), '--service', service.url, ...signIn(other)], { env: {} });
    expectFailure(stranger, 'WRONG_ACCOUNT');
    expect(stranger.err).toContain(`opens only for the account ${owner.accountId}`);

    const verified = await iki(['verify', at('olga.iki'), '--service', service.url, ...signIn(owner), '--json'], { env: {} });
    expect(verified.code, verified.err).toBe(0);
    expect(json(verified)).toMatchObject({ valid: true, checked: 'content', verdict: { kind: 'account', accountId: owner.accountId, revocation: 'active' } });
    const unpacked = await iki(['unpack', at('olga.iki'), '-o', at('out-olga'), '--service', service.url, ...signIn(owner)], { env: {} });
    expect(unpacked.code, unpacked.err).toBe(0);
    expect(unpacked.out).toContain(`for the verified account ${owner.accountId}; key active`);
  });

  it('without --service the certificate is not checked (offline); keys list and revoke; then revoked', async () => {
    const plain = await iki(['pack', project, '-k', at('olga.key'), '-o', at('plain.iki')]);
    expect(plain.code, plain.err).toBe(0);
    const offline = await iki(['verify', at('plain.iki')], { env: {} });
    expect(offline.out).toContain(`claims account ${owner.accountId}: UNVERIFIED (the key certificate was not checked against the key service's key (offline: give --service <url>`);
    const online = await iki(['verify', at('plain.iki'), '--service', service.url], { env: {} });
    expect(online.out).toContain(`for the verified account ${owner.accountId}; key active`);

    const listed = json(await iki(['keys', 'list', '--service', service.url, '--email', owner.email, '--password-file', at('password.txt'), '--json'], { env: {} }));
    expect(listed.keys).toEqual([expect.objectContaining({ accountId: owner.accountId, status: 'active' })]);
    const revoked = await iki(['keys', 'revoke', '-k', at('olga.key'), '--service', service.url, '--email', owner.email, '--password-file', at('password.txt')], { env: {} });
    expect(revoked.code, revoked.err).toBe(0);
    expect(revoked.out).toContain('revoked ');
    const after = await iki(['verify', at('plain.iki'), '--service', service.url, '--json'], { env: {} });
    expect(json(after).verdict).toMatchObject({ kind: 'account', revocation: 'revoked' });
    expectFailure(await iki(['keys', 'revoke', 'not-a-key', '--service', service.url, '--token', 'x']), 'USAGE', 2);
    expectFailure(await iki(['keys', 'list', '--service', service.url], { env: {} }), 'USAGE', 2);
  });

  it('interop: a file saved through the app\'s API verifies in the CLI with the same verdict, and the reverse', async () => {
    const session = await call('POST', '/api/sessions', { json: { email: other.email, password: PASSWORD } });
    const keyService = keyServiceClient(fetchRequest(service.url, { token: () => String(session.body.accessToken) }));
    const { signer } = await browserSigner();
    const registration = await registerSigner(keyService, signer, 'browser');
    const saved = await saveProject({ snapshot: { name: 'From the app' }, assets: [{ name: 'a.txt', data: new TextEncoder().encode('a') }],
      signer: { ...signer, claim: registration.claim }, app: 'iki-tests', name: 'From the app', canvas: { width: 10, height: 10 },
      protection: { account: keyService } });
    await writeFile(at('app.iki'), new Uint8Array(await (saved.blob as Blob).arrayBuffer()));
    const cli = json(await iki(['verify', at('app.iki'), '--service', service.url, ...signIn(other), '--json'], { env: {} }));
    expect(cli).toMatchObject({ valid: true, checked: 'content', verdict: { kind: 'account', accountId: other.accountId, revocation: 'active' } });

    const cliFile = await iki(['pack', project, '-k', at('olga.key'), '-o', at('olga2.iki')]);
    expect(cliFile.code).toBe(0);
    const opened = await openProject(new Uint8Array(await readFile(at('olga2.iki'))), { keyService });
    const cliVerdict = json(await iki(['verify', at('olga2.iki'), '--service', service.url, '--json'], { env: {} })).verdict;
    expect(opened.verdict).toMatchObject({ kind: cliVerdict.kind, accountId: cliVerdict.accountId, revocation: cliVerdict.revocation });
    expect(opened.assets.map((a) => a.name).sort()).toContain('images/hero.png');
    opened.close();
  });
});
