/**
 * `iki pack <dir> --key <key> -o <out.iki|out.ikm>`: a project folder or a Cubism model
 * folder (read by `../package`) into a signed container, optionally protected by a password
 * and/or X25519 recipients. The output is written to a temporary file and renamed at the
 * end, so a refused folder or an interrupted run leaves nothing behind.
 */
import { basename } from 'node:path';
import { writeContainer, type NewEntry, type WriteOptions } from '../container.js';
import { toBase64Url } from '../keys.js';
import { DEFAULT_CHUNK_SIZE_BYTES } from '../limits.js';
import { readModelFolder, readProjectFolder, type FolderPackage } from '../package/index.js';
import { PackageError } from '../package/errors.js';
import { countedTexture, decodedTextureOf, deflatedAheadOf } from '../package/texture-source.js';
import { DeflateAhead } from '../deflate-ahead.js';
import { DEFAULT_DEFLATE_LEVEL } from '../deflate-chunk.js';
import { helpRequested, parseChunkSize, parseCommand, plural, positionals, printJson, required, type Command } from './args.js';
import { checkFileTarget, writeFileAtomic, writeStream } from './atomic.js';
import { show } from './describe.js';
import { CliError, UsageError } from './errors.js';
import { inputName } from './files.js';
import type { CliIo } from './io.js';
import { loadSigningKey, parseRecipient } from './keyfiles.js';
import { counted, formatBytes, Progress } from './progress.js';
import { CHOOSE_ANOTHER, describeWeakness, MIN_SCORE, passwordStrength } from '../password-strength.js';
import { promptNewPassword, readPasswordFile } from './prompt.js';
import { kindOfName } from './read.js';
import { parseServiceUrl, serviceRecipient, showUrl } from './service-api.js';
import { packSigner } from './signer.js';
import { authPlan, SESSION_OPTIONS, signedIn } from './session.js';
import { prepareAccountSlot } from '../project/save.js';
import { cliVersion } from './version.js';
import { DeflatePool, defaultJobs, MAX_JOBS } from './deflate-pool.js';

const USAGE = `Usage: iki pack <dir> --key <file> -o <out.iki|out.ikm> [options]

Packs a folder into a signed container. The output's extension says which kind:
  .iki  a project folder: snapshot.json and everything under assets/
  .ikm  a Cubism model folder: the one *.model3.json at its top and every file it
        refers to (textures must be PNG; they are stored as decoded pixels)

  -o, --output <file>        the file to write
  -k, --key <file>           the Ed25519 signing key that signs the file (iki keygen)
      --password             protect with a password, typed twice at the terminal
      --password-file <file> protect with the password on the first line of <file>
                             (- reads it from standard input)
      --weak-password        take a password the strength estimator finds easy to
                             guess (refused otherwise; a warning is printed)
      --recipient <key>      protect for this X25519 public key (base64url; repeatable)
      --service <url>        protect for the licensing service at <url> (fetches its
                             X25519 key from <url>/api/keys/service; for masters)
      --account <url>        protect for your account on the service at <url>: the file
                             opens only when you are signed in there (an account slot;
                             sign in with --email or --token as below)
      --email <address>      with --account: sign in with this address; the password is
                             asked without echo (or --account-password-file <file>)
      --token <bearer>       with --account: an access token (default: IKI_TOKEN)
      --certificate <file>   sign as your seller account with this key certificate
                             (iki register-key); default: <key file>.cert when it exists
      --chunk-size <n>       bytes per chunk, 4096 to 16777216, or e.g. 64K, 1M (default 1M)
  -j, --jobs <n>             threads that deflate chunks, 1 to 64 (default: one per core
                             beyond the first, 2 on two cores; here ${defaultJobs()}); the
                             file is the same whatever the number; 1 deflates in the main thread
      --name <text>          the name in the manifest (default: the model's or project's)
      --canvas <w>x<h>       the project's canvas, when snapshot.json has no canvas
      --force                replace an existing output file
      --json                 print a summary as JSON
  -h, --help                 show this help
`;

const OPTIONS = {
  output: { type: 'string', short: 'o' },
  key: { type: 'string', short: 'k' },
  password: { type: 'boolean' },
  'password-file': { type: 'string' },
  'weak-password': { type: 'boolean' },
  recipient: { type: 'string', multiple: true },
  service: { type: 'string' },
  certificate: { type: 'string' },
  account: { type: 'string' },
  ...SESSION_OPTIONS,
  'chunk-size': { type: 'string' },
  jobs: { type: 'string', short: 'j' },
  name: { type: 'string' },
  canvas: { type: 'string' },
  force: { type: 'boolean' },
} as const;

function parseCanvas(text: string | undefined): { width: number; height: number } | undefined {
  if (text === undefined) return undefined;
  const match = /^(\d{1,9})x(\d{1,9})$/u.exec(text);
  const [width, height] = [Number(match?.[1]), Number(match?.[2])];
  if (match === null || width < 1 || height < 1) throw new UsageError('--canvas must be <width>x<height>, e.g. 1920x1080');
  return { width, height };
}

function parseJobs(text: string | undefined): number {
  if (text === undefined) return defaultJobs();
  const jobs = /^\d{1,3}$/u.test(text) ? Number(text) : 0;
  if (jobs < 1 || jobs > MAX_JOBS) throw new UsageError(`--jobs must be a whole number from 1 to ${MAX_JOBS}`);
  return jobs;
}

/** rgba8 rows must fit a chunk (docs/format.md section 5). */
function checkTextureWidths(pkg: FolderPackage, chunkSize: number): void {
  for (const entry of pkg.entries) {
    const width = entry.meta?.width ?? 0;
    if (width * 4 > chunkSize) {
      throw new UsageError(`${entry.path} is ${width} pixels wide; a row needs ${width * 4} bytes, more than --chunk-size ${chunkSize}`);
    }
  }
}

/** The X25519 key of the service at `url`, said on stderr. */
async function serviceKey(url: string, io: CliIo): Promise<Uint8Array> {
  const base = parseServiceUrl(url);
  const key = await serviceRecipient(base);
  io.err(`iki: note: sealing for the service at ${showUrl(base)} (key ${toBase64Url(key)})\n`);
  return key;
}

interface ProtectionValues {
  password?: boolean;
  'password-file'?: string;
  'weak-password'?: boolean;
  recipient?: string[];
  service?: string;
  account?: string;
  email?: string;
  token?: string;
  'account-password-file'?: string;
}

type Packed = NonNullable<WriteOptions['protection']>;

/** An account slot for the account signed in at `--account` (the key service wraps its key). */
async function accountProtection(values: ProtectionValues, io: CliIo): Promise<Pick<Packed, 'account' | 'contentKey'>> {
  if (values.account === undefined) {
    if (values.email !== undefined || values.token !== undefined) throw new UsageError('--email and --token sign in for --account; give --account <url>');
    return {};
  }
  const base = parseServiceUrl(values.account, '--account');
  const session = await signedIn(base, authPlan(values, ['account-password-file', values['account-password-file']], io, 'pack'),
    values['account-password-file'], io);
  const slot = await prepareAccountSlot(session.keyService);
  io.err(`iki: note: protecting for the account ${show(slot.accountId)} at ${showUrl(base)}\n`);
  return { account: { accountId: slot.accountId, blob: slot.blob }, contentKey: slot.contentKey };
}

/**
 * Refuses a password the estimator scores below `MIN_SCORE` (a file's slot is guessed offline),
 * unless `--weak-password`, which warns instead.
 */
async function checkStrength(password: string, values: ProtectionValues, io: CliIo): Promise<void> {
  const strength = await passwordStrength(password, ['iki', ...(values.email === undefined ? [] : [values.email])]);
  if (strength.score >= MIN_SCORE) return;
  if (values['weak-password'] === true) {
    io.err(`iki: warning: ${describeWeakness(strength)} Anyone with the file can try passwords offline.\n`);
    return;
  }
  throw new CliError('WEAK_PASSWORD', `${describeWeakness(strength)} ${CHOOSE_ANOTHER}, `
    + 'or give --weak-password to use it anyway');
}

async function protection(values: ProtectionValues, io: CliIo): Promise<Packed | undefined> {
  if (values.password === true && values['password-file'] !== undefined) throw new UsageError('give --password or --password-file, not both');
  const recipients = (values.recipient ?? []).map(parseRecipient);
  if (values.service !== undefined) recipients.push(await serviceKey(values.service, io));
  const password = values.password === true ? await promptNewPassword(io)
    : values['password-file'] !== undefined ? await readPasswordFile(values['password-file']) : undefined;
  if (password !== undefined) await checkStrength(password, values, io);
  const account = await accountProtection(values, io);
  if (password === undefined && recipients.length === 0 && account.account === undefined) return undefined;
  return { ...(password === undefined ? {} : { password }), ...(recipients.length === 0 ? {} : { recipients }), ...account };
}

/**
 * The entries with their data counted into `progress` as the writer reads it (a texture the
 * writer takes decoded, texture-source.ts, counts whole when taken).
 */
function withProgress(entries: FolderPackage['entries'], progress: Progress): NewEntry[] {
  return entries.map((entry) => {
    const data = { [Symbol.asyncIterator]: () => counted(entry.data, progress) };
    const texture = decodedTextureOf(entry.data);
    return { ...entry, data: texture === undefined ? data
      : countedTexture(data, texture, (n) => progress.add(n), deflatedAheadOf(entry.data)) };
  });
}

async function readFolder(kind: 'project' | 'model', dir: string, values: { name?: string; canvas?: string },
  deflateAhead: DeflateAhead | undefined): Promise<FolderPackage> {
  const name = values.name === undefined ? {} : { name: values.name };
  if (kind === 'model') {
    if (values.canvas !== undefined) throw new UsageError('--canvas applies to project files (.iki) only');
    return readModelFolder(dir, { ...name, ...(deflateAhead === undefined ? {} : { deflateAhead }) });
  }
  const canvas = parseCanvas(values.canvas);
  try {
    return await readProjectFolder(dir, { app: `iki-cli ${cliVersion()}`, ...name, ...(canvas === undefined ? {} : { canvas }) });
  } catch (error) {
    // The output's extension chose "project"; a model folder packed to .iki lands here.
    if (error instanceof PackageError && error.code === 'MISSING_FILE' && error.path === 'snapshot.json') {
      throw new PackageError('MISSING_FILE', `${dir} has no snapshot.json, so it is not a project folder; to pack a model `
        + 'folder (with a *.model3.json), name the output .ikm', error.path);
    }
    if (error instanceof PackageError && error.code === 'BAD_PROJECT' && /no canvas/u.test(error.message)) {
      throw new PackageError('BAD_PROJECT', `${error.message} with --canvas WxH (e.g. --canvas 1920x1080)`, error.path);
    }
    throw error;
  }
}

/**
 * Writes the container to `output` with a progress bar; resolves to its size in bytes. With a
 * `pool` (`--jobs` above 1), chunks are deflated by its worker threads (deflate-pool.ts).
 */
async function writePacked(output: string, force: boolean, pkg: FolderPackage, options: WriteOptions,
  pool: DeflatePool | undefined, io: CliIo): Promise<number> {
  const total = pkg.entries.reduce((n, e) => n + e.size, 0);
  const progress = new Progress(io.stderr, `packing ${basename(output)}`, total);
  let bytes = 0;
  try {
    await writeFileAtomic(output, force, undefined, async (file) => {
      bytes = await writeStream(file, writeContainer(withProgress(pkg.entries, progress),
        pool === undefined ? options : { ...options, deflater: pool }));
    }, (text) => io.err(text));
  } finally {
    progress.finish();
  }
  return bytes;
}

/**
 * Reads the folder and writes the container. With `jobs` above 1 the pool of deflate workers
 * starts first, so the chunks of a model's textures start deflating while the folder's next
 * textures are still decoded and hashed for the manifest (deflate-ahead.ts).
 */
async function packFolder(kind: 'project' | 'model', dir: string, values: { name?: string; canvas?: string },
  output: string, force: boolean, options: Omit<WriteOptions, 'meta'>, jobs: number, io: CliIo): Promise<{ pkg: FolderPackage; bytes: number }> {
  const pool = jobs > 1 ? await DeflatePool.start(jobs) : undefined;
  const ahead = pool === undefined || kind !== 'model' ? undefined : new DeflateAhead(pool, {
    deflateLevel: DEFAULT_DEFLATE_LEVEL, chunkSize: options.chunkSize ?? DEFAULT_CHUNK_SIZE_BYTES,
    encrypted: options.protection !== undefined });
  try {
    const pkg = await readFolder(kind, dir, values, ahead);
    checkTextureWidths(pkg, options.chunkSize ?? DEFAULT_CHUNK_SIZE_BYTES);
    const bytes = await writePacked(output, force, pkg, { ...options, meta: pkg.meta }, pool, io);
    return { pkg, bytes };
  } finally {
    ahead?.stop();
    await pool?.close();
  }
}

async function run(argv: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals: rest } = parseCommand(argv, OPTIONS);
  if (helpRequested(values, pack, io)) return 0;
  const [dir] = positionals(rest, ['dir'], 'pack') as [string];
  inputName(dir, '<dir>');
  const output = required(values.output, 'output', 'pack');
  const kind = kindOfName(output);
  if (kind === undefined) throw new UsageError('the output must end in .iki (project file) or .ikm (model file)');
  const chunkSize = values['chunk-size'] === undefined ? DEFAULT_CHUNK_SIZE_BYTES : parseChunkSize(values['chunk-size']);
  const jobs = parseJobs(values.jobs);
  if (values.service !== undefined) parseServiceUrl(values.service);
  if (values.account !== undefined) parseServiceUrl(values.account, '--account');
  const force = values.force === true;
  await checkFileTarget(output, force);
  const keyFile = required(values.key, 'key', 'pack');
  const signingKey = await loadSigningKey(keyFile);
  try {
    const { signer, createdMs, certificateFile } = await packSigner(keyFile, values.certificate, signingKey.publicKey, io);
    const protect = await protection(values, io);
    try {
      const { pkg, bytes } = await packFolder(kind, dir, values, output, force, { kind, signingKey, signer, createdMs, chunkSize,
        ...(protect === undefined ? {} : { protection: protect }) }, jobs, io);
      report(io, values.json === true, { file: output, kind, bytes, entries: pkg.entries.length,
        decodedBytes: pkg.entries.reduce((n, e) => n + e.size, 0), chunkSize, encrypted: protect !== undefined,
        password: protect?.password !== undefined, recipients: protect?.recipients?.length ?? 0,
        accountSlot: protect?.account?.accountId ?? null,
        signer: toBase64Url(signingKey.publicKey), account: signer.account ?? null, certificate: certificateFile ?? null,
        ignored: pkg.ignored });
    } finally {
      protect?.contentKey?.free();
    }
    return 0;
  } finally {
    signingKey.free();
  }
}

/** What `pack --json` prints. */
interface PackSummary {
  file: string;
  kind: 'project' | 'model';
  bytes: number;
  entries: number;
  decodedBytes: number;
  chunkSize: number;
  encrypted: boolean;
  password: boolean;
  recipients: number;
  /** The account an account slot opens for. */
  accountSlot: string | null;
  /** The signing key, base64url. */
  signer: string;
  /** The account of an `account` signer. */
  account: string | null;
  /** The certificate file used. */
  certificate: string | null;
  ignored: string[];
}

function report(io: CliIo, json: boolean, s: PackSummary): void {
  if (json) return printJson(io, s);
  if (s.ignored.length > 0) {
    const list = s.ignored.slice(0, 5).join(', ') + (s.ignored.length > 5 ? ', ...' : '');
    io.err(`iki: note: ${plural(s.ignored.length, 'file')} of the folder ${s.ignored.length === 1 ? 'is' : 'are'} not part of the package: ${list}\n`);
  }
  const locks = [s.password ? 'a password' : '', s.recipients > 0 ? plural(s.recipients, 'recipient') : '',
    s.accountSlot === null ? '' : `the account ${show(s.accountSlot)}`].filter(Boolean).join(' and ');
  const account = s.account === null ? '' : ` for account ${show(s.account)}`;
  io.out(`wrote ${s.file}: ${plural(s.entries, 'entry')}, ${formatBytes(s.decodedBytes)} of content in ${formatBytes(s.bytes)}\n`
    + `${s.encrypted ? `encrypted for ${locks}` : 'not encrypted'}; signed by ${s.signer}${account}\n`);
}

/** The `pack` command. */
export const pack: Command = { name: 'pack', summary: 'pack a project or model folder into a signed .iki / .ikm file', usage: USAGE, run };
