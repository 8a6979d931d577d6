/**
 * The CLI's own saved session (issue 14 item 1): `iki login` signs in once and keeps the
 * session in a file; the commands that act for an account use it when given neither
 * `--email` nor `--token`, refreshing its 15-minute access token with the refresh token as
 * needed and writing the new access token and the new refresh token (each refresh replaces it)
 * back; `iki logout` ends the session on the service and
 * deletes the file.
 *
 * Where: `IKI_SESSION_FILE`, else `$XDG_CONFIG_HOME/iki/session.json`, else
 * `~/.config/iki/session.json`. The refresh token in it opens the account until the session
 * ends (30 days unused, 90 at most, or sign-out), so the file is written with mode 0600 (the
 * directory 0700) through a temporary file renamed into place, and a file that group or others
 * may read is refused with the command that fixes it. The service's session list shows it as
 * "iki CLI on <host name>".
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, mkdir, open, readFile, rename, rm, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { CliError } from './errors.js';
import type { CliIo } from './io.js';
import { callService, showUrl, stringField } from './service-api.js';

/** What the file holds. */
export interface SavedSession {
  version: 1;
  /** The service's base URL as `URL.href`. */
  service: string;
  accountId: string;
  email: string;
  sessionId: string;
  refreshToken: string;
  accessToken: string;
  /** Milliseconds since the epoch. */
  accessExpiresAt: number;
}

/** Refresh this long before the access token expires. */
const EARLY_MS = 60_000;

/** The session file's path for `io`'s environment. */
export function sessionFilePath(io: CliIo): string {
  const env = io.env ?? process.env;
  if (env.IKI_SESSION_FILE !== undefined && env.IKI_SESSION_FILE !== '') return env.IKI_SESSION_FILE;
  const config = env.XDG_CONFIG_HOME !== undefined && env.XDG_CONFIG_HOME !== '' ? env.XDG_CONFIG_HOME : join(env.HOME ?? homedir(), '.config');
  return join(config, 'iki', 'session.json');
}

/** Whether a session file exists (any service). */
export function hasSavedSession(io: CliIo): boolean {
  return existsSync(sessionFilePath(io));
}

/** Writes the session with mode 0600, atomically. */
export async function writeSession(io: CliIo, session: SavedSession): Promise<string> {
  const path = sessionFilePath(io);
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const temp = `${path}.${randomBytes(6).toString('hex')}.tmp`;
  const handle = await open(temp, 'wx', 0o600);
  try {
    await handle.writeFile(`${JSON.stringify(session, null, 2)}\n`);
    await handle.sync();
  } finally {
    await handle.close();
  }
  // The umask cannot widen 0600, but a file system may; make sure before it holds the name.
  await chmod(temp, 0o600);
  await rename(temp, path);
  return path;
}

/** The saved session, or undefined when there is none; refused when others may read it. */
export async function readSession(io: CliIo): Promise<SavedSession | undefined> {
  const path = sessionFilePath(io);
  let mode: number;
  try {
    mode = (await stat(path)).mode;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  if ((mode & 0o077) !== 0) {
    throw new CliError('INSECURE_SESSION_FILE', `${path} may be read by others (mode ${(mode & 0o777).toString(8)}); `
      + `anyone who read it can use your session: run iki logout (or delete it), then chmod 600 and iki login again`);
  }
  const value = JSON.parse(await readFile(path, 'utf8')) as Partial<SavedSession>;
  if (value.version !== 1 || typeof value.refreshToken !== 'string' || typeof value.service !== 'string') {
    throw new CliError('INVALID_ARGUMENT', `${path} is not an iki session file; delete it and run iki login`);
  }
  return value as SavedSession;
}

/** Deletes the session file (nothing when there is none). */
export async function deleteSession(io: CliIo): Promise<void> {
  await rm(sessionFilePath(io), { force: true });
}

/**
 * An access token from the saved session for `base`: the saved one while it has more than a
 * minute left, else a refreshed one (written back). `NOT_SIGNED_IN` without a session for
 * `base` or when it has ended on the service.
 */
export async function savedAccessToken(base: URL, io: CliIo): Promise<string> {
  const saved = await readSession(io);
  if (saved === undefined || saved.service !== base.href) {
    throw new CliError('NOT_SIGNED_IN', `no saved session for ${showUrl(base)}${saved === undefined ? '' : ` (the saved one is for ${saved.service})`}; `
      + `run iki login --service ${showUrl(base)} --email <address>, or give --email or --token`);
  }
  if (saved.accessExpiresAt - EARLY_MS > Date.now()) return saved.accessToken;
  let answer: Awaited<ReturnType<typeof callService>>;
  try {
    answer = await callService(base, 'POST', '/api/sessions/refresh', { json: { refreshToken: saved.refreshToken } });
  } catch (err) {
    if (err instanceof CliError && err.code === 'UNAUTHENTICATED') {
      await deleteSession(io);
      throw new CliError('NOT_SIGNED_IN', `the saved session for ${showUrl(base)} has ended (signed out, revoked or unused too long); run iki login again`);
    }
    throw err;
  }
  const accessToken = stringField(answer, 'accessToken', 'POST /api/sessions/refresh');
  const body = answer.body as Record<string, unknown>;
  const expiresIn = Number(body['expiresIn'] ?? 0);
  // Every refresh replaces the refresh token (the old one, used again, ends the session), so
  // the new one is written back before it is used. A refresh right after another command's
  // has none: that command wrote the new one.
  const next = typeof body['refreshToken'] === 'string' ? body['refreshToken'] : undefined;
  const current = next === undefined ? await readSession(io) : undefined;
  await writeSession(io, { ...saved, ...(current?.service === saved.service ? { refreshToken: current.refreshToken } : {}),
    ...(next === undefined ? {} : { refreshToken: next }), accessToken, accessExpiresAt: Date.now() + expiresIn * 1000 });
  return accessToken;
}
