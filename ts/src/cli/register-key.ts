/**
 * `iki register-key --key <file> --service <url> --email <address>`: registers a signing key
 * with the caller's seller account (`POST /api/keys/signing` with the proof of possession
 * of docs/format.md 7.2, made inside WASM by `SigningKey.registrationProof`) and writes the
 * key certificate the service answers next to the key as `<key file>.cert` (one line of
 * base64url, mode 0644), where `iki pack` finds it. The service accepts masters signed by
 * registered keys only.
 *
 * It signs in with e-mail and password (`POST /api/sessions`; the password is typed without
 * echo or read with `--password-file`), or uses a bearer token (`--token`, or `IKI_TOKEN`).
 * The token and password are held as JavaScript strings, which cannot be zeroized; they are
 * sent only to `--service` (redirects are not followed).
 */
import { toBase64Url } from '../keys.js';
import { helpRequested, parseCommand, positionals, printJson, required, type Command } from './args.js';
import { checkFileTarget, writeFileAtomic } from './atomic.js';
import { show } from './describe.js';
import { CliError, UsageError } from './errors.js';
import type { CliIo } from './io.js';
import { loadSigningKey } from './keyfiles.js';
import { accountId, parseServiceUrl, registerSigningKey, showUrl } from './service-api.js';
import { accessToken, authPlan, warnPlainHttp } from './session.js';
import { certificateFileOf, checkCertificate } from './signer.js';

const USAGE = `Usage: iki register-key --key <file> --service <url> --email <address> [options]
       iki register-key --key <file> --service <url> --token <bearer> [options]

Registers a signing key with your seller account on an iki licensing service, and writes
the key certificate it answers to <key file>.cert, where iki pack finds it. The service
accepts only masters signed by a key registered to the uploading account.

  -k, --key <file>           the Ed25519 signing key to register (iki keygen)
      --service <url>        the service's base URL, e.g. https://iki.example
      --email <address>      sign in with this e-mail address; the password is asked
                             at the terminal without echo
      --password-file <file> with --email: the password on the first line of <file>
                             (- reads it from standard input)
      --token <bearer>       use this access token instead of signing in (default:
                             the environment variable IKI_TOKEN)
      --name <text>          a name for the key on the service, e.g. "studio laptop"
      --force                replace an existing certificate file
      --json                 print {accountId, publicKey, certificateFile} as JSON
  -h, --help                 show this help

Example:
  iki keygen -o seller.key
  iki register-key --key seller.key --service https://iki.example --email me@example.com
  iki pack ./my-model --key seller.key --service https://iki.example -o my-model.ikm
`;

const OPTIONS = {
  key: { type: 'string', short: 'k' },
  service: { type: 'string' },
  email: { type: 'string' },
  'password-file': { type: 'string' },
  token: { type: 'string' },
  name: { type: 'string' },
  force: { type: 'boolean' },
} as const;

/** Longest key name the service takes, in code points (`RegisterSigningKeyRequest.name`). */
const MAX_KEY_NAME_CHARS = 256;

function report(io: CliIo, json: boolean, r: { accountId: string; publicKey: string; certificateFile: string; created: boolean; service: string }): void {
  if (json) return printJson(io, { accountId: r.accountId, publicKey: r.publicKey, certificateFile: r.certificateFile });
  io.out(`${r.created ? 'registered' : 'already registered (certificate renewed)'}: key ${r.publicKey} `
    + `for account ${show(r.accountId)} at ${r.service}\ncertificate written to ${r.certificateFile}\n`);
}

async function run(argv: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals: rest } = parseCommand(argv, OPTIONS);
  if (helpRequested(values, registerKey, io)) return 0;
  positionals(rest, [], 'register-key');
  const keyFile = required(values.key, 'key', 'register-key');
  const base = parseServiceUrl(required(values.service, 'service', 'register-key'));
  const plan = authPlan(values, ['password-file', values['password-file']], io, 'register-key');
  if (values.name !== undefined && (values.name.trim() === '' || [...values.name].length > MAX_KEY_NAME_CHARS)) {
    throw new UsageError(`--name must be 1 to ${MAX_KEY_NAME_CHARS} characters`);
  }
  const certificateFile = certificateFileOf(keyFile);
  const force = values.force === true;
  await checkFileTarget(certificateFile, force);
  warnPlainHttp(base, plan, io);
  const signingKey = await loadSigningKey(keyFile);
  try {
    const token = await accessToken(base, plan, values['password-file'], io);
    const account = await accountId(base, token);
    const publicKey = toBase64Url(signingKey.publicKey);
    const proof = toBase64Url(signingKey.registrationProof(account));
    const answer = await registerSigningKey(base, token, { publicKey, proof, ...(values.name === undefined ? {} : { name: values.name }) });
    const certificate = checkCertificate(answer.certificate, 'the certificate the service answered', signingKey.publicKey);
    if (certificate.accountId !== account) {
      throw new CliError('BAD_CERTIFICATE', `the service certified the key for account ${show(certificate.accountId)}, not ${show(account)}`);
    }
    await writeFileAtomic(certificateFile, force, 0o644, async (file) => {
      await file.writeFile(`${answer.certificate}\n`, 'utf8');
    });
    report(io, values.json === true, { accountId: account, publicKey, certificateFile, created: answer.created, service: showUrl(base) });
    return 0;
  } finally {
    signingKey.free();
  }
}

/** The `register-key` command. */
export const registerKey: Command = {
  name: 'register-key', summary: 'register a signing key with your seller account; writes <key>.cert', usage: USAGE, run,
};
