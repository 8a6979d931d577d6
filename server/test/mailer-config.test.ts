/**
 * The mail settings in `loadConfig`: IKI_SMTP_URL, IKI_SMTP_STARTTLS and IKI_MAIL_FROM, each
 * bound at and past its limit, every problem listed at once, and the SMTP password never
 * printed (ConfigError, util.inspect, JSON).
 */
import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';
import { MAX_MAIL_ADDRESS_CHARS, MAX_MAIL_LOCAL_PART_CHARS, parseMailbox } from '../src/services/mail-settings.js';

const FROM = 'no-reply@iki.example';
const USER = 'smtp-user-7f3a';
const PASSWORD = 'hunter2:pa@ss/w%rd';
const CREDENTIALS = `${USER}:${encodeURIComponent(PASSWORD)}`;

/** Mail needs a configured public URL (issue 22 item 4), which every case here has unless it says otherwise. */
const PUBLIC = { IKI_PUBLIC_URL: 'http://iki.example' };
const mail = (env: Record<string, string>) => loadConfig({ ...PUBLIC, IKI_MAIL_FROM: FROM, ...env }).mail;

function problemsOf(env: Record<string, string>): string[] {
  try {
    loadConfig({ ...PUBLIC, ...env });
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).problems;
  }
  return expect.unreachable('the configuration was accepted') as never;
}

describe('mail configuration', () => {
  it('is off by default: verification links go to the log', () => {
    expect(loadConfig({}).mail).toBeUndefined();
  });

  it('reads an smtp:// URL with credentials and a display-name From; STARTTLS is required by default', () => {
    const config = mail({ IKI_SMTP_URL: `smtp://${CREDENTIALS}@mail.example:587`, IKI_MAIL_FROM: 'iki <no-reply@iki.example>' });
    expect(config?.smtp).toMatchObject({ host: 'mail.example', port: 587, secure: false, startTls: 'required' });
    expect(config?.smtp.credentials()).toEqual({ user: USER, password: PASSWORD });
    expect(config?.smtp.address).toBe('smtp://mail.example:587');
    expect(config?.from).toEqual({ name: 'iki', address: 'no-reply@iki.example' });
  });

  it('defaults the port by scheme (587, 465) and takes IPv6 literals and a trailing slash', () => {
    expect(mail({ IKI_SMTP_URL: 'smtp://mail.example' })?.smtp).toMatchObject({ port: 587, secure: false });
    expect(mail({ IKI_SMTP_URL: 'smtps://mail.example/' })?.smtp).toMatchObject({ port: 465, secure: true, startTls: 'required' });
    expect(mail({ IKI_SMTP_URL: 'smtp://[::1]:25' })?.smtp).toMatchObject({ host: '::1', port: 25 });
    expect(mail({ IKI_SMTP_URL: 'smtp://[::1]:25' })?.smtp.address).toBe('smtp://[::1]:25');
    expect(mail({ IKI_SMTP_URL: 'smtp://127.0.0.1:25' })?.smtp.credentials()).toBeUndefined();
  });

  it('takes ports 1 to 65535 and refuses one past either end', () => {
    expect(mail({ IKI_SMTP_URL: 'smtp://mail.example:1' })?.smtp.port).toBe(1);
    expect(mail({ IKI_SMTP_URL: 'smtp://mail.example:65535' })?.smtp.port).toBe(65535);
    for (const port of ['0', '65536', '-1', 'x']) {
      expect(problemsOf({ IKI_SMTP_URL: `smtp://mail.example:${port}`, IKI_MAIL_FROM: FROM }), port)
        .toEqual([expect.stringMatching(/^IKI_SMTP_URL must be smtp:.*port from 1 to 65535$/)]);
    }
  });

  it.each([
    ['https://mail.example', /smtp:\/\/ or smtps:\/\//],
    ['mail.example:587', /smtp:\/\/ or smtps:\/\//],
    ['smtp:///', /name a host/],
    ['smtp://mail_example:25', /name a host/],
    ['smtp://[10.0.0.1]:25', /^IKI_SMTP_URL must be smtp:/],
    ['smtp://mail.example:25/path', /path, query or fragment/],
    ['smtp://mail.example:25?pool=true', /path, query or fragment/],
    ['smtp://mail.example:25#x', /path, query or fragment/],
    ['smtp://user@mail.example', /both a user and a password/],
    ['smtp://:secret@mail.example', /both a user and a password/],
    ['smtp://user:%E0%A4%A@mail.example', /percent-encoded/],
    ['not a url', /^IKI_SMTP_URL must be smtp:/],
  ])('refuses IKI_SMTP_URL=%s', (url, problem) => {
    const problems = problemsOf({ IKI_SMTP_URL: url, IKI_MAIL_FROM: FROM });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(problem);
  });

  it('IKI_SMTP_STARTTLS: required, optional or off, for smtp:// only', () => {
    for (const value of ['required', 'optional', 'off'] as const) {
      expect(mail({ IKI_SMTP_URL: 'smtp://mail.example', IKI_SMTP_STARTTLS: value })?.smtp.startTls).toBe(value);
    }
    expect(problemsOf({ IKI_SMTP_URL: 'smtp://mail.example', IKI_MAIL_FROM: FROM, IKI_SMTP_STARTTLS: 'yes' }))
      .toEqual(['IKI_SMTP_STARTTLS must be "required", "optional" or "off"']);
    expect(problemsOf({ IKI_SMTP_URL: 'smtps://mail.example', IKI_MAIL_FROM: FROM, IKI_SMTP_STARTTLS: 'off' }))
      .toEqual([expect.stringMatching(/applies to smtp:\/\/ only/)]);
  });

  it('refuses to start with SMTP and no IKI_PUBLIC_URL: mailed links are never built from a Host header (issue 22 item 4)', () => {
    const problems = (env: Record<string, string>) => {
      try {
        loadConfig(env);
        return [];
      } catch (err) {
        return (err as ConfigError).problems;
      }
    };
    expect(problems({ IKI_SMTP_URL: 'smtp://mail.example', IKI_MAIL_FROM: FROM }))
      .toEqual(['IKI_PUBLIC_URL is required when IKI_SMTP_URL is set: links in e-mails point there']);
    expect(problems({ IKI_SMTP_URL: 'smtp://mail.example', IKI_MAIL_FROM: FROM, IKI_PUBLIC_URL: 'https://iki.example' })).toEqual([]);
    expect(problems({ IKI_PUBLIC_URL: 'http://iki.example' })).toEqual([]);
  });

  it('IKI_MAIL_FROM is required with IKI_SMTP_URL, and neither it nor IKI_SMTP_STARTTLS works alone', () => {
    expect(problemsOf({ IKI_SMTP_URL: 'smtp://mail.example' })).toEqual(['IKI_MAIL_FROM is required when IKI_SMTP_URL is set']);
    expect(problemsOf({ IKI_MAIL_FROM: FROM })).toEqual([expect.stringMatching(/only with IKI_SMTP_URL/)]);
    expect(problemsOf({ IKI_SMTP_STARTTLS: 'off' })).toEqual([expect.stringMatching(/only with IKI_SMTP_URL/)]);
  });

  it('IKI_MAIL_FROM: an address or a named mailbox, nothing that could break the header', () => {
    expect(parseMailbox('a@b')).toEqual({ name: undefined, address: 'a@b' });
    expect(parseMailbox('"iki service" <no-reply@iki.example>')).toEqual({ name: 'iki service', address: 'no-reply@iki.example' });
    expect(parseMailbox('<no-reply@iki.example>')).toEqual({ name: undefined, address: 'no-reply@iki.example' });
    expect(parseMailbox("o'brien+iki@mail.iki.example")?.address).toBe("o'brien+iki@mail.iki.example");
    for (const bad of ['no-reply', '@iki.example', 'no-reply@', 'a@b@c', 'a b@c', 'a..b@c', '.a@c', 'a@-c', 'a@c-', 'a@c..d',
      'iki <a@b', 'iki <a@b>, x <c@d>', 'a@b\r\nBcc: victim@example.com', 'ik"i <a@b>', 'iki\\ <a@b>', 'a@b\u0000']) {
      expect(parseMailbox(bad), JSON.stringify(bad)).toBeUndefined();
    }
    expect(problemsOf({ IKI_SMTP_URL: 'smtp://mail.example', IKI_MAIL_FROM: 'no-reply' }))
      .toEqual([expect.stringMatching(/^IKI_MAIL_FROM must be an address/)]);
  });

  it(`IKI_MAIL_FROM takes ${MAX_MAIL_ADDRESS_CHARS} characters, ${MAX_MAIL_LOCAL_PART_CHARS} before the @, and not one more`, () => {
    const domain = (chars: number) => Array.from({ length: Math.ceil(chars / 50) }, () => 'd'.repeat(49)).join('.').slice(0, chars);
    const local = 'l'.repeat(MAX_MAIL_LOCAL_PART_CHARS);
    const longest = `${local}@${domain(MAX_MAIL_ADDRESS_CHARS - local.length - 1)}`;
    expect(longest).toHaveLength(MAX_MAIL_ADDRESS_CHARS);
    expect(parseMailbox(longest)?.address).toBe(longest);
    expect(parseMailbox(`${longest}d`)).toBeUndefined();
    expect(parseMailbox(`${local}@iki.example`)).toBeDefined();
    expect(parseMailbox(`${local}l@iki.example`)).toBeUndefined();
  });

  it('lists every mail problem at once, with the others', () => {
    const problems = problemsOf({ IKI_SMTP_URL: `smtp://${CREDENTIALS}@mail.example:0`, IKI_MAIL_FROM: 'nobody',
      IKI_SMTP_STARTTLS: 'sometimes', IKI_PORT: '70000' });
    expect(problems).toHaveLength(4);
  });
});

describe('the SMTP password is never printed', () => {
  const secretForms = [PASSWORD, encodeURIComponent(PASSWORD), USER, CREDENTIALS];

  it('not by the configuration: JSON, util.inspect (with or without custom inspection), String', () => {
    const config = loadConfig({ ...PUBLIC, IKI_SMTP_URL: `smtp://${CREDENTIALS}@mail.example:2525`, IKI_MAIL_FROM: FROM });
    const shown = [JSON.stringify(config), inspect(config, { depth: null }), inspect(config, { depth: null, customInspect: false, showHidden: true }),
      String(config.mail?.smtp), `${JSON.stringify(config.mail)}`];
    for (const text of shown) {
      expect(text).toContain('mail.example');
      for (const secret of secretForms) expect(text).not.toContain(secret);
    }
    expect(String(config.mail?.smtp)).toBe('SmtpServer(smtp://mail.example:2525, credentials redacted)');
  });

  it('not by a ConfigError, whatever else is wrong with the URL', () => {
    for (const url of [`smtp://${CREDENTIALS}@mail.example:0`, `smtp://${CREDENTIALS}@mail.example:99999`, `http://${CREDENTIALS}@mail.example`,
      `smtp://${CREDENTIALS}@mail.example/x?y#z`, `smtp://${CREDENTIALS}@bad_host`, `smtp://${CREDENTIALS}@mail.example`]) {
      let caught: unknown;
      try {
        loadConfig({ IKI_SMTP_URL: url, IKI_SMTP_STARTTLS: 'maybe' });
      } catch (err) {
        caught = err;
      }
      expect(caught, url).toBeInstanceOf(ConfigError);
      const text = [String(caught), (caught as Error).stack ?? '', inspect(caught), JSON.stringify(caught)].join('\n');
      for (const secret of secretForms) expect(text, url).not.toContain(secret);
    }
  });
});
