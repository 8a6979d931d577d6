/**
 * Signing in to an iki service from the CLI, shared by the commands that act for an account
 * (`register-key`, `pack --account`, opening account files in `unpack`/`verify`/`inspect`,
 * `keys`): an access token from `--token` or `IKI_TOKEN`, or a session from `--email` and the
 * password typed without echo (or read from a file). The key service's endpoints are the
 * library's one client (`../key-service.ts`) over the CLI's requests, which keep the
 * service's codes and request ids, time out and never follow redirects.
 *
 * The token and password are JavaScript strings, which cannot be zeroized; they are sent only
 * to the service the user named.
 */
import { keyServiceClient, ServiceError, type KeyServiceApi } from '../key-service.js';
import { CliError, UsageError } from './errors.js';
import type { CliIo } from './io.js';
import { promptPassword, readPasswordFile } from './prompt.js';
import { accountId, callService, isLoopback, showUrl, signIn } from './service-api.js';
import { hasSavedSession, savedAccessToken } from './session-file.js';

/**
 * How to authenticate: a token, an e-mail address whose password is asked for later, or the
 * session `iki login` saved (`session-file.ts`).
 */
export type AuthPlan = { token: string } | { email: string } | { saved: true };

/**
 * The plan from `--email`, `--token` or `IKI_TOKEN`, or undefined when none was given.
 * `passwordFile` names the option that holds the sign-in password's file (`--password-file`
 * in `register-key`, `--account-password-file` where `--password-file` is the file's own
 * password) and its value.
 */
export function optionalAuthPlan(values: { email?: string; token?: string }, passwordFile: [name: string, value: string | undefined],
  io: CliIo): AuthPlan | undefined {
  if (values.email !== undefined && values.token !== undefined) throw new UsageError('give --email or --token, not both');
  if (passwordFile[1] !== undefined && values.email === undefined) throw new UsageError(`--${passwordFile[0]} needs --email`);
  if (values.email !== undefined) return { email: values.email };
  const token = values.token ?? (io.env ?? process.env).IKI_TOKEN;
  return token !== undefined && token.trim() !== '' ? { token: token.trim() } : undefined;
}

/** As {@link optionalAuthPlan}, but signing in is required by `command`. */
export function authPlan(values: { email?: string; token?: string }, passwordFile: [name: string, value: string | undefined],
  io: CliIo, command: string): AuthPlan {
  const plan = optionalAuthPlan(values, passwordFile, io);
  if (plan !== undefined) return plan;
  if (hasSavedSession(io)) return { saved: true };
  throw new UsageError(`give --email <address> (or --token <bearer>, or set IKI_TOKEN, or run iki login) to sign in (see iki ${command} --help)`);
}

/** A note when a secret would cross the network unencrypted. */
export function warnPlainHttp(base: URL, plan: AuthPlan, io: CliIo): void {
  if (!isLoopback(base) && base.protocol === 'http:') {
    io.err(`iki: note: ${showUrl(base)} is plain http; your ${'email' in plan ? 'password' : 'token'} crosses the network unencrypted\n`);
  }
}

/** The access token: the given one, or a session from e-mail and password. */
export async function accessToken(base: URL, plan: AuthPlan, passwordFile: string | undefined, io: CliIo): Promise<string> {
  if ('token' in plan) return plan.token;
  if ('saved' in plan) return savedAccessToken(base, io);
  const password = passwordFile !== undefined ? await readPasswordFile(passwordFile) : await promptPassword(io);
  return signIn(base, plan.email, password);
}

/** The key service at `base` over the CLI's requests; `token` for the calls that need an account. */
export function keyServiceAt(base: URL, token?: string): KeyServiceApi {
  return keyServiceClient(async (method, path, json) => {
    try {
      return (await callService(base, method, path, { ...(token === undefined ? {} : { token }), ...(json === undefined ? {} : { json }) })).body;
    } catch (error) {
      // The library reads the code (SERVICE_UNREACHABLE means offline); the message keeps
      // the CLI's wording with the request id.
      if (error instanceof CliError) throw new ServiceError(error.code, error.message, 0);
      throw error;
    }
  });
}

/** A signed-in account at `base`. */
export interface Session {
  accountId: string;
  keyService: KeyServiceApi;
}

/** Signs in (or uses the token) and asks who the account is. */
export async function signedIn(base: URL, plan: AuthPlan, passwordFile: string | undefined, io: CliIo): Promise<Session> {
  warnPlainHttp(base, plan, io);
  const token = await accessToken(base, plan, passwordFile, io);
  return { accountId: await accountId(base, token), keyService: keyServiceAt(base, token) };
}

/** The options that sign in, where `--password-file` means the file's own password. */
export const SESSION_OPTIONS = {
  email: { type: 'string' },
  token: { type: 'string' },
  'account-password-file': { type: 'string' },
} as const;
