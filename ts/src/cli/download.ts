/**
 * `iki download <license id> --service <url> -o <file>`: downloads the caller's license copy
 * (`GET /api/licenses/{id}/model`) and resumes where it stopped (issue 16 item 4). Bytes go to
 * `<file>.part`, with the copy's ETag beside it in `<file>.part.etag`; a cut connection is
 * continued at once (`resumableBody`: `Range` + `If-Range`), and a later run after an
 * interruption (Ctrl-C, a crash, a lost network) asks only for the bytes after those in
 * `<file>.part`. The service makes every download of one license byte-identical and names it
 * by a strong ETag; when that ETag no longer matches, the partial file is started over. A
 * continued download counts as no new download against the service's per-license limits.
 * When the copy is whole, `<file>.part` is renamed to `<file>`.
 */
import { open, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { contentRange, resumableBody } from '../resumable.js';
import { helpRequested, parseCommand, positionals, printJson, required, type Command } from './args.js';
import { CliError, UsageError } from './errors.js';
import type { CliIo } from './io.js';
import { parseServiceUrl, showUrl } from './service-api.js';
import { accessToken, authPlan, warnPlainHttp } from './session.js';

const USAGE = `Usage: iki download <license id> --service <url> -o <file> [--email <address> | --token <bearer>]

Downloads your license copy of a model. An interrupted download is resumed: run the same
command again and only the missing bytes are fetched (they are kept in <file>.part).

  -o, --output <file>        where to write the copy (.ikm)
                             (signed in with --email, --token, IKI_TOKEN or iki login)
      --service <url>        the service's base URL, e.g. https://iki.example
      --email <address>      sign in with this e-mail address (password asked without echo)
      --password-file <file> with --email: the password on the first line of <file>
      --token <bearer>       use this access token (default: the environment variable IKI_TOKEN)
      --force                replace an existing <file>
      --json                 print {file, bytes, resumedFrom} as JSON
  -h, --help                 show this help
`;

const OPTIONS = {
  output: { type: 'string', short: 'o' },
  service: { type: 'string' },
  email: { type: 'string' },
  'password-file': { type: 'string' },
  token: { type: 'string' },
  force: { type: 'boolean' },
} as const;

async function fail(response: Response, what: string): Promise<never> {
  const text = await response.text().catch(() => '');
  let code = 'HTTP_ERROR';
  let message = `${what}: HTTP ${response.status}`;
  try {
    const body = JSON.parse(text) as { error?: { code?: string; message?: string } };
    if (body.error?.code !== undefined) {
      code = body.error.code;
      message = `${what}: ${body.error.message ?? code}`;
    }
  } catch { /* not JSON */ }
  throw new CliError(code, message);
}

async function run(argv: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals: rest } = parseCommand(argv, OPTIONS);
  if (helpRequested(values, download, io)) return 0;
  const [licenseId] = positionals(rest, ['license id'], 'download') as [string];
  if (!/^[0-9a-f]{16}$/.test(licenseId)) throw new UsageError('the license id is 16 lowercase hex digits');
  const output = required(values.output, 'output', 'download');
  const base = parseServiceUrl(required(values.service, 'service', 'download'));
  const plan = authPlan(values, ['password-file', values['password-file']], io, 'download');
  if (values.force !== true && await stat(output).then(() => true, () => false)) {
    throw new CliError('FILE_EXISTS', `${output} exists; use --force to replace it`);
  }
  warnPlainHttp(base, plan, io);
  const token = await accessToken(base, plan, values['password-file'], io);
  const part = `${output}.part`;
  const tagFile = `${part}.etag`;
  const url = new URL(`api/licenses/${licenseId}/model`, base);
  const get = (headers: Record<string, string>) => fetch(url, { headers: { authorization: `Bearer ${token}`, ...headers },
    redirect: 'manual' }).catch((error: unknown) => {
    throw new CliError('SERVICE_UNREACHABLE', `cannot reach ${showUrl(base)} (${(error as Error).message})`);
  });

  // What an earlier run left: its bytes and the ETag they belong to.
  const have = await stat(part).then((s) => s.size, () => 0);
  const etag = have > 0 ? (await readFile(tagFile, 'utf8').catch(() => '')).trim() : '';
  let response = await get(have > 0 && etag !== '' ? { Range: `bytes=${have}-`, 'If-Range': etag } : {});
  if (response.status === 416 && have > 0) {
    // The partial file is already whole (or longer than the copy): start over.
    await response.body?.cancel();
    response = await get({});
  }
  if (!response.ok) await fail(response, `GET /api/licenses/${licenseId}/model`);
  const resumedFrom = response.status === 206 ? contentRange(response)?.start ?? -1 : 0;
  if (response.status === 206 && resumedFrom !== have) throw new CliError('HTTP_ERROR', 'the service resumed at another byte than asked for');
  const newTag = response.headers.get('etag') ?? '';
  await writeFile(tagFile, `${newTag}\n`);
  const file = await open(part, resumedFrom > 0 ? 'a' : 'w', 0o644);
  let bytes = resumedFrom;
  try {
    const body = resumableBody(get, response, { offset: resumedFrom,
      onResume: (offset) => io.err(`connection lost at byte ${offset}; resuming\n`) });
    const reader = body.getReader();
    for (let next = await reader.read(); next.done !== true; next = await reader.read()) {
      await file.write(next.value);
      bytes += next.value.byteLength;
    }
    await file.sync();
  } finally {
    await file.close();
  }
  await rename(part, output);
  await rm(tagFile, { force: true });
  if (values.json === true) printJson(io, { file: output, bytes, resumedFrom });
  else io.out(`${output}: ${bytes} bytes${resumedFrom > 0 ? ` (resumed at byte ${resumedFrom})` : ''}\n`);
  return 0;
}

/** The `download` command. */
export const download: Command = {
  name: 'download', summary: 'download your license copy of a model; resumes an interrupted download', usage: USAGE, run,
};
