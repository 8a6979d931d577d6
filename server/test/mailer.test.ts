/**
 * SMTP delivery (`services/smtp-mailer.ts`) against a real SMTP server (smtp-server, the
 * nodemailer authors' server) on 127.0.0.1: the message as received, AUTH, STARTTLS with
 * certificate checks, failures that are logged without the link or the password and that
 * never hang, and sign-up to verification through `serve()` with the link taken from the mail.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SMTPServer, type SMTPServerOptions, type SMTPServerSession } from 'smtp-server';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { loadConfig, type MailConfig } from '../src/config.js';
import { serve } from '../src/main.js';
import { describeDuration, mayCrossNetworkInPlainText, SMTP_TIMEOUTS, smtpMailer, VERIFICATION_SUBJECT, type SmtpMailerOptions } from '../src/services/smtp-mailer.js';
import { fakeCrypto } from './helpers/fake-crypto.js';
import { captureLogger, TEST_HASHING, type LogLine } from './helpers/app.js';
import { preparedDataDir } from './helpers/databases.js';

// A self-signed certificate for IP 127.0.0.1 made for these tests (openssl req -x509, P-256,
// valid to 2126). Its key is published right here and protects nothing.
const TEST_KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQguJgV+VFcm0b2TTHP
qj4O5G6q9kXrkp6qBuYpBqVjEJyhRANCAAQhSr4HsVQ5yQ5e49WogFJrf8Ykz9L8
NMKIxRipzwrKR+Yb6Jvi8yQxyKzVx4DUXuNzHcn4DKWqTt/WujBZqa+A
-----END PRIVATE KEY-----
`;
const TEST_CERT = `-----BEGIN CERTIFICATE-----
MIIBpTCCAUygAwIBAgIUI3jOxStTVnm6khwfPffKrueVfLowCgYIKoZIzj0EAwIw
HzEdMBsGA1UEAwwUaWtpIHRlc3QgU01UUCBzZXJ2ZXIwIBcNMjYxMTIyMTUzODM3
WhgPMjEyNjEwMjkxNTM4MzdaMB8xHTAbBgNVBAMMFGlraSB0ZXN0IFNNVFAgc2Vy
dmVyMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEIUq+B7FUOckOXuPVqIBSa3/G
JM/S/DTCiMUYqc8KykfmG+ib4vMkMcis1ceA1F7jcx3J+Aylqk7f1rowWamvgKNk
MGIwHQYDVR0OBBYEFH8AtI46Z5v3AcAcsQEqo71tzO4cMB8GA1UdIwQYMBaAFH8A
tI46Z5v3AcAcsQEqo71tzO4cMA8GA1UdEwEB/wQFMAMBAf8wDwYDVR0RBAgwBocE
fwAAATAKBggqhkjOPQQDAgNHADBEAiAA+NiOXkmTld9iaYQ2vTNjaMz/yw+ABmmW
1JUarSP7yAIgGbvcs3T8Lwu3TdPCC0LuguTAVCKlDBllImtyYtXphJw=
-----END CERTIFICATE-----
`;

const TOKEN = 'Zm9yLXRlc3RzLW9ubHktbm90LWEtcmVhbC10b2tlbi0';
const LINK = `http://iki.test/verify-email?token=${TOKEN}`;
const PASSWORD = 'p@ss:w/rd-hunter2';

/** A message as the SMTP server received it. */
interface Received {
  headers: Map<string, string>;
  text: string;
  secure: boolean;
  user: string | undefined;
  mailFrom: string;
  rcptTo: string[];
}

/** Decodes the body of a single-part message (nodemailer picks quoted-printable for long lines). */
function parse(raw: string, session: SMTPServerSession): Received {
  const split = raw.indexOf('\r\n\r\n');
  const headers = new Map<string, string>();
  for (const line of raw.slice(0, split).replace(/\r\n[ \t]+/g, ' ').split('\r\n')) {
    const colon = line.indexOf(':');
    headers.set(line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim());
  }
  let body = raw.slice(split + 4);
  const encoding = headers.get('content-transfer-encoding');
  if (encoding === 'quoted-printable') {
    body = Buffer.from(body.replace(/=\r\n/g, '').replace(/=([0-9A-F]{2})/g, (_m, h: string) => String.fromCharCode(parseInt(h, 16))), 'latin1').toString('utf8');
  } else if (encoding === 'base64') {
    body = Buffer.from(body, 'base64').toString('utf8');
  }
  const { mailFrom, rcptTo } = session.envelope;
  return { headers, text: body.replace(/\r\n/g, '\n'), secure: session.secure,
    user: typeof session.user === 'string' ? session.user : undefined,
    mailFrom: mailFrom === false ? '' : mailFrom.address, rcptTo: rcptTo.map((r) => r.address) };
}

/** A running test SMTP server and what it has received. */
interface TestSmtp {
  port: number;
  received: Received[];
  /** Resolves with the next message received. */
  next(): Promise<Received>;
}

const servers: SMTPServer[] = [];
const others: Server[] = [];
const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
  await Promise.all(others.splice(0).map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
});
afterAll(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

/**
 * Starts smtp-server on 127.0.0.1. By default it offers STARTTLS with the test certificate and
 * accepts AUTH as user `mailer` with `PASSWORD`, answering a wrong password with a reply that
 * quotes it (as a careless server might).
 */
async function startSmtp(options: SMTPServerOptions = {}): Promise<TestSmtp> {
  const received: Received[] = [];
  const waiting: ((r: Received) => void)[] = [];
  const server = new SMTPServer({
    key: TEST_KEY, cert: TEST_CERT, logger: false, authOptional: true, allowInsecureAuth: true,
    onAuth(auth, _session, callback) {
      if (auth.username === 'mailer' && auth.password === PASSWORD) callback(null, { user: auth.username });
      else callback(new Error(`bad password ${auth.password ?? ''}`));
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        const message = parse(Buffer.concat(chunks).toString('utf8'), session);
        received.push(message);
        waiting.shift()?.(message);
        callback();
      });
    },
    ...options,
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as AddressInfo).port;
  return { port, received, next: () => new Promise((resolve) => waiting.push(resolve)) };
}

/** A port with nothing listening: bound, then released. */
async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

/** The mail settings for a URL, through the real configuration parser. */
function mailFor(url: string, startTls?: string): MailConfig {
  const env: Record<string, string> = { IKI_SMTP_URL: url, IKI_MAIL_FROM: 'iki <no-reply@iki.test>', IKI_PUBLIC_URL: 'http://iki.test' };
  if (startTls !== undefined) env['IKI_SMTP_STARTTLS'] = startTls;
  const { mail } = loadConfig(env);
  if (mail === undefined) throw new Error('no mail settings');
  return mail;
}

const auth = `mailer:${encodeURIComponent(PASSWORD)}`;

function mailer(url: string, startTls: string | undefined, logs: LogLine[], extra: Partial<SmtpMailerOptions> = {}) {
  return smtpMailer(mailFor(url, startTls), { logger: captureLogger(logs), verificationTtlSeconds: 24 * 3600,
    tls: { ca: TEST_CERT }, ...extra });
}

/** Everything logged, as one string, for "never printed" checks. */
const printed = (logs: LogLine[]) => JSON.stringify(logs);

/** The secrets no log may hold, each in the forms a log might show. */
function expectNoSecrets(logs: LogLine[]): void {
  const text = printed(logs);
  for (const secret of [TOKEN, PASSWORD, encodeURIComponent(PASSWORD), Buffer.from(PASSWORD).toString('base64')]) {
    expect(text).not.toContain(secret);
  }
}

describe('smtp mailer', () => {
  it('delivers the verification message over STARTTLS: From, To, Subject, the exact link, its validity', async () => {
    const smtp = await startSmtp();
    const logs: LogLine[] = [];
    const arrived = smtp.next();
    await mailer(`smtp://${auth}@127.0.0.1:${smtp.port}`, undefined, logs).sendVerification('ada@example.com', LINK);
    const message = await arrived;
    expect(message.secure).toBe(true);
    expect(message.user).toBe('mailer');
    expect(message.mailFrom).toBe('no-reply@iki.test');
    expect(message.rcptTo).toEqual(['ada@example.com']);
    expect(message.headers.get('from')).toBe('iki <no-reply@iki.test>');
    expect(message.headers.get('to')).toBe('ada@example.com');
    expect(message.headers.get('subject')).toBe(VERIFICATION_SUBJECT);
    expect(message.headers.get('auto-submitted')).toBe('auto-generated');
    expect(message.headers.get('content-type')).toMatch(/^text\/plain; charset=utf-8/);
    const lines = message.text.split('\n');
    expect(lines).toContain(LINK);
    expect(message.text).toContain('expires in 24 hours');
    expect(message.text).toContain('If you did not sign up for iki, ignore this e-mail');
    expect(logs).toMatchObject([{ level: 'info', message: 'verification e-mail sent', fields: { to: 'ada@example.com' } }]);
    expectNoSecrets(logs);
  });

  it('wrong credentials: nothing is sent, the error is logged without password or link, and the call resolves', async () => {
    const smtp = await startSmtp();
    const logs: LogLine[] = [];
    await mailer(`smtp://mailer:wrong-${encodeURIComponent(PASSWORD)}@127.0.0.1:${smtp.port}`, undefined, logs)
      .sendVerification('ada@example.com', LINK);
    expect(smtp.received).toHaveLength(0);
    expect(logs).toHaveLength(1);
    expect(logs[0]).toMatchObject({ level: 'error', fields: { to: 'ada@example.com', server: `smtp://127.0.0.1:${smtp.port}`,
      error: { code: 'EAUTH', responseCode: 535 } } });
    // The server quoted the wrong password in its reply; the log shows it redacted.
    expect(String((logs[0]?.fields['error'] as Record<string, unknown>)['reason'])).toContain('bad password <redacted>');
    expect(printed(logs)).not.toContain('wrong-');
    expectNoSecrets(logs);
  });

  it('STARTTLS required (the default) refuses a server that does not offer it', async () => {
    const smtp = await startSmtp({ disabledCommands: ['STARTTLS'] });
    const logs: LogLine[] = [];
    await mailer(`smtp://${auth}@127.0.0.1:${smtp.port}`, undefined, logs).sendVerification('ada@example.com', LINK);
    expect(smtp.received).toHaveLength(0);
    expect(logs[0]?.level).toBe('error');
    expectNoSecrets(logs);
  });

  it('checks the certificate: an unknown issuer is refused', async () => {
    const smtp = await startSmtp();
    const logs: LogLine[] = [];
    await mailer(`smtp://${auth}@127.0.0.1:${smtp.port}`, undefined, logs, { tls: {} }).sendVerification('ada@example.com', LINK);
    expect(smtp.received).toHaveLength(0);
    expect(logs[0]).toMatchObject({ level: 'error', fields: { error: { reason: expect.stringMatching(/certificate/) } } });
    expectNoSecrets(logs);
  });

  it('STARTTLS optional sends in plain text when not offered; off never upgrades', async () => {
    const plain = await startSmtp({ disabledCommands: ['STARTTLS'] });
    const logs: LogLine[] = [];
    const first = plain.next();
    await mailer(`smtp://${auth}@127.0.0.1:${plain.port}`, 'optional', logs).sendVerification('ada@example.com', LINK);
    expect((await first).secure).toBe(false);
    const offering = await startSmtp();
    const second = offering.next();
    await mailer(`smtp://127.0.0.1:${offering.port}`, 'off', logs).sendVerification('bob@example.com', LINK);
    expect(await second).toMatchObject({ secure: false, user: undefined, rcptTo: ['bob@example.com'] });
    expectNoSecrets(logs);
  });

  it('implicit TLS with smtps://', async () => {
    const smtp = await startSmtp({ secure: true });
    const logs: LogLine[] = [];
    const arrived = smtp.next();
    await mailer(`smtps://${auth}@127.0.0.1:${smtp.port}`, undefined, logs).sendVerification('ada@example.com', LINK);
    expect(await arrived).toMatchObject({ secure: true, user: 'mailer' });
  });

  it('an unreachable server fails fast and is logged; check() warns without throwing', async () => {
    const port = await closedPort();
    const logs: LogLine[] = [];
    const smtp = mailer(`smtp://${auth}@127.0.0.1:${port}`, undefined, logs);
    const started = Date.now();
    await smtp.sendVerification('ada@example.com', LINK);
    expect(Date.now() - started).toBeLessThan(5000);
    expect(logs[0]).toMatchObject({ level: 'error', fields: { error: { code: 'ESOCKET', originalCode: 'ECONNREFUSED' } } });
    expect(await smtp.check()).toBe(false);
    expect(logs[1]).toMatchObject({ level: 'warn', fields: { server: `smtp://127.0.0.1:${port}` } });
    expectNoSecrets(logs);
  });

  it('a server that accepts but never greets cannot hold the call past the greeting timeout', async () => {
    const sockets: Socket[] = [];
    const silent = createServer((socket) => { sockets.push(socket); });
    others.push(silent);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as AddressInfo;
    const logs: LogLine[] = [];
    const started = Date.now();
    await mailer(`smtp://${auth}@127.0.0.1:${port}`, undefined, logs, { timeouts: { greetingMs: 300 } })
      .sendVerification('ada@example.com', LINK);
    expect(Date.now() - started).toBeLessThan(5000);
    expect(logs[0]).toMatchObject({ level: 'error', fields: { error: { code: 'ETIMEDOUT' } } });
    for (const socket of sockets) socket.destroy();
    expectNoSecrets(logs);
  });

  it('warns about plain text only when it can leave the machine', () => {
    const at = (url: string, startTls?: string) => mayCrossNetworkInPlainText(mailFor(url, startTls).smtp);
    expect(at('smtp://mail.example')).toBe(false);
    expect(at('smtps://mail.example')).toBe(false);
    expect(at('smtp://mail.example', 'optional')).toBe(true);
    expect(at('smtp://10.0.0.5:25', 'off')).toBe(true);
    for (const host of ['localhost', '127.0.0.1', '127.1.2.3', '[::1]']) expect(at(`smtp://${host}:25`, 'off'), host).toBe(false);
  });

  it('the production timeouts are bounded', () => {
    for (const ms of Object.values(SMTP_TIMEOUTS)) expect(ms).toBeLessThanOrEqual(30_000);
  });

  it('states the link validity in whole units', () => {
    expect(describeDuration(24 * 3600)).toBe('24 hours');
    expect(describeDuration(3600)).toBe('1 hour');
    expect(describeDuration(5400)).toBe('90 minutes');
    expect(describeDuration(60)).toBe('1 minute');
    expect(describeDuration(45)).toBe('45 seconds');
  });
});

describe('serve with IKI_SMTP_URL', () => {
  async function start(url: string, logs: LogLine[]) {
    const dataDir = await preparedDataDir(await mkdtemp(join(tmpdir(), 'iki-mail-')));
    dirs.push(dataDir);
    return serve({ port: 0, dataDir, logger: captureLogger(logs), config: { passwordHashing: TEST_HASHING },
      env: { IKI_SMTP_URL: url, IKI_MAIL_FROM: 'no-reply@iki.test', IKI_SMTP_STARTTLS: 'off', IKI_PUBLIC_URL: 'http://iki.test' },
      crypto: async (secret) => fakeCrypto(secret.expose()) });
  }

  async function post(url: string, body: unknown): Promise<{ status: number; body: any }> {
    const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return { status: response.status, body: await response.json() };
  }

  it('sign-up mails the link; the mailed token verifies the address; no log holds the link or the password', async () => {
    const smtp = await startSmtp();
    const logs: LogLine[] = [];
    const running = await start(`smtp://${auth}@127.0.0.1:${smtp.port}`, logs);
    try {
      const arrived = smtp.next();
      const created = await post(`${running.url}/api/accounts`, { email: 'Ada@Example.com', password: 'correct horse battery', name: 'Ada' });
      expect(created.status).toBe(202);
      expect(created.body).toEqual({ status: 'verification-sent' });
      const message = await arrived;
      expect(message.rcptTo).toEqual(['ada@example.com']);
      expect(message.user).toBe('mailer');
      // SMTP needs IKI_PUBLIC_URL (issue 22 item 4): the link points there, whatever the request's Host.
      const link = message.text.split('\n').find((l) => l.startsWith('http://iki.test/verify-email?token='));
      const token = new URL(String(link)).searchParams.get('token') ?? '';
      expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
      const verified = await post(`${running.url}/api/accounts/verify`, { token, password: 'correct horse battery' });
      expect(verified.status).toBe(200);
      expect(verified.body).toMatchObject({ email: 'ada@example.com', emailVerified: true });
      expect(printed(logs)).not.toContain(token);
      expect(printed(logs)).not.toContain(PASSWORD);
      expect(printed(logs)).not.toContain(encodeURIComponent(PASSWORD));
      expect(printed(logs)).not.toContain('mailer:');
      const startLine = logs.find((l) => l.message === 'verification e-mails go over SMTP');
      expect(startLine?.fields).toEqual({ host: '127.0.0.1', port: smtp.port, tls: 'starttls off' });
    } finally {
      await running.close();
    }
  }, 60_000);

  it('starts while the SMTP server is down; sign-up still succeeds and the failure is logged without the link', async () => {
    const port = await closedPort();
    const logs: LogLine[] = [];
    const running = await start(`smtp://${auth}@127.0.0.1:${port}`, logs);
    try {
      const created = await post(`${running.url}/api/accounts`, { email: 'bob@example.com', password: 'correct horse battery', name: 'Bob' });
      expect(created.status).toBe(202);
      // The message goes out after the answer (the answer tells nothing about accounts).
      await expect.poll(() => logs.some((l) => l.level === 'error'), { timeout: 20_000 }).toBe(true);
      const failure = logs.find((l) => l.level === 'error');
      expect(failure).toMatchObject({ message: expect.stringMatching(/not sent/), fields: { to: 'bob@example.com' } });
      expect(printed(logs)).not.toContain('verify-email?token=');
      expect(printed(logs)).not.toContain(PASSWORD);
      // The background check at start reports the outage too.
      await expect.poll(() => logs.some((l) => l.level === 'warn' && /SMTP server check failed/.test(l.message))).toBe(true);
    } finally {
      await running.close();
    }
  }, 60_000);
});
