/**
 * `iki login` and `iki logout` (issue 14 item 1): sign in once and keep the session in a
 * mode-0600 file (`session-file.ts`), which `register-key`, `keys` and `pack --account` use
 * when given neither `--email` nor `--token`; end it on the service and delete the file.
 */
import { hostname } from 'node:os';
import { helpRequested, parseCommand, positionals, printJson, required, type Command } from './args.js';
import { show } from './describe.js';
import type { CliIo } from './io.js';
import { promptPassword, readPasswordFile } from './prompt.js';
import { callService, parseServiceUrl, showUrl, stringField } from './service-api.js';
import { deleteSession, readSession, sessionFilePath, writeSession } from './session-file.js';
import { warnPlainHttp } from './session.js';

const LOGIN_USAGE = `Usage: iki login --service <url> --email <address> [--password-file <file>] [--json]

Signs in to the iki service at <url> and keeps the session in a file only you can read
(IKI_SESSION_FILE, else ~/.config/iki/session.json), so that register-key, keys and
pack --account work without --email or --token. The session lasts 30 days unused and
90 days at most; iki logout ends it. Signing in again replaces it.

      --service <url>        the service's base URL, e.g. https://iki.example
      --email <address>      your account's e-mail address; the password is asked at
                             the terminal without echo
      --password-file <file> the password on the first line of <file> (- for stdin)
      --json                 print the account as JSON
  -h, --help                 show this help
`;

const LOGOUT_USAGE = `Usage: iki logout [--json]

Ends the saved session on its service (its tokens stop working at once) and deletes the
session file. Does nothing when there is none. To end every session of your account,
use "Sign out everywhere" on the service's account page.
`;

const LOGIN_OPTIONS = {
  service: { type: 'string' },
  email: { type: 'string' },
  'password-file': { type: 'string' },
} as const;

async function runLogin(argv: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals: rest } = parseCommand(argv, LOGIN_OPTIONS);
  if (helpRequested(values, login, io)) return 0;
  positionals(rest, [], 'login');
  const base = parseServiceUrl(required(values.service, 'service', 'login'));
  const email = required(values.email, 'email', 'login');
  warnPlainHttp(base, { email }, io);
  const password = values['password-file'] !== undefined ? await readPasswordFile(values['password-file']) : await promptPassword(io);
  const answer = await callService(base, 'POST', '/api/sessions', {
    json: { email, password, device: `iki CLI on ${hostname()}`, refreshTokenIn: 'body' } });
  const what = 'POST /api/sessions';
  const path = await writeSession(io, {
    version: 1, service: base.href, email: email.trim().toLowerCase(),
    accountId: stringField(answer, 'accountId', what), sessionId: stringField(answer, 'sessionId', what),
    refreshToken: stringField(answer, 'refreshToken', what), accessToken: stringField(answer, 'accessToken', what),
    accessExpiresAt: Date.now() + Number(answer.body['expiresIn'] ?? 0) * 1000,
  });
  const accountId = stringField(answer, 'accountId', what);
  if (values.json === true) printJson(io, { service: showUrl(base), accountId, email, sessionFile: path });
  else io.out(`signed in to ${showUrl(base)} as ${show(email)} (account ${accountId}); session saved in ${path} (mode 0600)\n`);
  return 0;
}

async function runLogout(argv: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals: rest } = parseCommand(argv, {});
  if (helpRequested(values, logout, io)) return 0;
  positionals(rest, [], 'logout');
  const saved = await readSession(io).catch(async (err: unknown) => {
    // A file others could read is deleted all the same: its session should end anyway.
    await deleteSession(io);
    throw err;
  });
  if (saved === undefined) {
    if (values.json === true) printJson(io, { signedOut: false });
    else io.out(`not signed in (no ${sessionFilePath(io)})\n`);
    return 0;
  }
  const base = new URL(saved.service);
  try {
    await callService(base, 'POST', '/api/sessions/sign-out', { json: { refreshToken: saved.refreshToken } });
  } finally {
    // Offline or refused, the file goes: the session then ends when unused for 30 days.
    await deleteSession(io);
  }
  if (values.json === true) printJson(io, { signedOut: true, service: showUrl(base), accountId: saved.accountId });
  else io.out(`signed out of ${showUrl(base)} (${show(saved.email)}); ${sessionFilePath(io)} deleted\n`);
  return 0;
}

/** The `login` command. */
export const login: Command = { name: 'login', summary: 'sign in to a service and keep the session for later commands', usage: LOGIN_USAGE, run: runLogin };
/** The `logout` command. */
export const logout: Command = { name: 'logout', summary: 'end the saved session and delete its file', usage: LOGOUT_USAGE, run: runLogout };
