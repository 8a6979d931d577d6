/**
 * `iki unpack <file> -o <dir>`: writes a container's entries back as files. Model textures
 * (`rgba8`) become PNG files under their PNG paths; project assets go back to their original
 * names (`meta.assetNames`; an asset with several names is written once and linked under the
 * others). Every path is checked again (`../package/layout.ts`). Files are
 * written into a temporary folder and moved into place only after the signature verified, so
 * a damaged or tampered file leaves nothing behind. The temporary folder is made only once the
 * file is unlocked and its manifest read: until then nothing is on disk, so Ctrl-C or SIGTERM
 * during a password's key derivation ends the process at once with nothing to clean; later,
 * they stop the read at the next chunk and the folder is removed (`atomic.ts`).
 */
import { constants } from 'node:fs';
import { copyFile, link, mkdir, open, stat, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { EntryInfo, Header, Kind, Manifest, Verified } from '../container.js';
import { encodePng } from '../image.js';
import { toBase64Url } from '../keys.js';
import { joinInside, textureTooLarge, unpackLayout } from '../package/index.js';
import { helpRequested, parseCommand, plural, positionals, printJson, required, type Command } from './args.js';
import { checkFolderTarget, interruption, tempFolderFor, type TempFolder } from './atomic.js';
import { CliError } from './errors.js';
import { inputName } from './files.js';
import type { CliIo } from './io.js';
import { UNLOCK_OPTIONS, unlockPlan, type UnlockValues } from './keyfiles.js';
import { readFileEvents } from './read.js';
import { fileVerdict, keyRequired, readService, SERVICE_READ_HELP, SERVICE_READ_OPTIONS, verdictJson, withAccount, type ReadService } from './verdict.js';
import { signerLine, signerVerdict } from './signer-verdict.js';

const USAGE = `Usage: iki unpack <file> -o <dir> [options]

Writes the files of a .iki or .ikm file into <dir>, after checking every chunk and the
signature. Model textures are written as PNG files; project assets get their names back
(an asset stored once under several names is written once and hard-linked under the
others; a name that breaks the path rules is ignored and the asset keeps its hash name).

  -o, --output <dir>         the folder to write (created; must be empty unless --force)
      --password             unlock with a password typed at the terminal
      --password-file <file> unlock with the password on the first line of <file>
                             (- reads it from standard input)
      --identity <file>      unlock with an X25519 identity (iki keygen --x25519)
${SERVICE_READ_HELP}      --force                write into a non-empty folder (same names are replaced,
                             other files are kept)
      --json                 print a summary as JSON
  -h, --help                 show this help
`;

const OPTIONS = { output: { type: 'string', short: 'o' }, force: { type: 'boolean' }, ...UNLOCK_OPTIONS, ...SERVICE_READ_OPTIONS } as const;

/** The entry being written: its open file, the other names it gets, or its pixels until the last chunk. */
interface Open {
  files: FileHandle[];
  /** The full path written, and the other full paths that get the same content (linked or copied). */
  first: string | undefined;
  others: string[];
  pixels?: { data: Uint8Array; filled: number; width: number; height: number };
}

/**
 * Issue 22 item 12: one asset may carry many names (`meta.assetNames`), and an 8 MiB manifest
 * has room for about 100,000, so writing the content once per name could turn a small file
 * into hundreds of gigabytes. Each content is written once; its other names are hard links to
 * it, which take no space. Where the folder's file system cannot link, they are copies, and
 * the copies of one unpack may add at most the container's own content size again (at least
 * 64 MiB) before unpack stops with `TOO_LARGE`.
 */
const MIN_COPY_ALLOWANCE_BYTES = 64 * 1024 * 1024;

/** Writes entries into `root` as chunks arrive. */
class EntryWriter {
  private current: Open | undefined;
  private currentEntry = -1;
  readonly written: string[] = [];

  /** Bytes the fallback copies may still write. */
  private copyAllowance: number;

  constructor(private readonly root: string, private readonly manifest: Manifest, private readonly layout: string[][]) {
    this.copyAllowance = Math.max(MIN_COPY_ALLOWANCE_BYTES, manifest.entries.reduce((sum, e) => sum + e.size, 0));
  }

  async chunk(entry: number, data: Uint8Array, last: boolean): Promise<void> {
    if (entry !== this.currentEntry) await this.start(entry);
    const open = this.current as Open;
    if (open.pixels !== undefined) {
      if (open.pixels.filled + data.length > open.pixels.data.length) throw new CliError('BAD_DATA', 'texture larger than its manifest size');
      open.pixels.data.set(data, open.pixels.filled);
      open.pixels.filled += data.length;
    } else {
      for (const file of open.files) await file.write(data);
    }
    if (last) await this.finish();
  }

  private async start(entry: number): Promise<void> {
    const info = this.manifest.entries[entry] as EntryInfo;
    const paths = this.layout[entry] ?? [];
    const files: FileHandle[] = [];
    const full = paths.map((path) => joinInside(this.root, path));
    this.current = { files, first: full[0], others: full.slice(1) };
    this.currentEntry = entry;
    if (full[0] !== undefined) {
      await mkdir(dirname(full[0]), { recursive: true });
      files.push(await open(full[0], 'wx'));
    }
    this.written.push(...paths);
    if (info.encoding === 'rgba8') {
      // Textures beyond the PNG encoder's bounds were refused at the manifest (read.ts).
      const { width = 0, height = 0 } = info.meta ?? {};
      const tooLarge = textureTooLarge(width, height);
      if (tooLarge !== undefined) throw new CliError('TOO_LARGE', `${info.path}: ${tooLarge}`);
      this.current.pixels = { data: new Uint8Array(info.size), filled: 0, width, height };
    }
  }

  private async finish(): Promise<void> {
    const open = this.current;
    if (open === undefined) return;
    this.current = undefined;
    if (open.pixels !== undefined) {
      const png = encodePng(open.pixels.width, open.pixels.height, open.pixels.data);
      for (const file of open.files) await file.write(png);
    }
    await this.close(open);
    if (open.first !== undefined) for (const other of open.others) await this.duplicate(open.first, other);
  }

  /** Gives `to` the content of the finished file `from`: a hard link, or a copy within the allowance. */
  private async duplicate(from: string, to: string): Promise<void> {
    await mkdir(dirname(to), { recursive: true });
    try {
      await link(from, to);
      return;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'EXDEV' && code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EMLINK' && code !== 'ENOSYS') throw error;
    }
    const { size } = await stat(from);
    if (size > this.copyAllowance) {
      throw new CliError('TOO_LARGE', 'this file names its assets under more names than unpack copies: the folder\'s file system '
        + 'cannot link files, and the copies would exceed the container\'s own size; unpack onto a file system with hard links');
    }
    this.copyAllowance -= size;
    await copyFile(from, to, constants.COPYFILE_EXCL);
  }

  private async close(open: Open): Promise<void> {
    await Promise.all(open.files.map((f) => f.close()));
  }

  /** Closes whatever is still open (after a failure). */
  async abort(): Promise<void> {
    if (this.current !== undefined) await this.close(this.current).catch(() => undefined);
    this.current = undefined;
  }
}

/** Reads `file` into the folder `openFolder` makes once the manifest is known. */
async function unpackInto(file: string, openFolder: () => Promise<string>, io: CliIo, values: UnlockValues, service: ReadService) {
  const plan = withAccount(await unlockPlan(values, io), service);
  let kind: Kind | undefined;
  let header: Header | undefined;
  let writer: EntryWriter | undefined;
  let verified: Verified | undefined;
  try {
    for await (const event of readFileEvents(file, io, plan, 'unpacking', interruption)) {
      if (event.type === 'header') {
        kind = event.header.kind;
        header = event.header;
      } else if (event.type === 'locked' && !plan.given) {
        throw keyRequired(file, event.slots);
      } else if (event.type === 'manifest') {
        const layout = unpackLayout(kind ?? 'project', event.manifest);
        writer = new EntryWriter(await openFolder(), event.manifest, layout);
      } else if (event.type === 'chunk') {
        await (writer as EntryWriter).chunk(event.entry, event.data, event.last);
      } else if (event.type === 'end') verified = event.verified;
    }
  } catch (error) {
    await writer?.abort();
    throw error;
  } finally {
    plan.free();
  }
  if (writer === undefined) throw new CliError('KEY_REQUIRED', `${file} is encrypted; give --password, --password-file or --identity`);
  if (verified === undefined || header === undefined) throw new CliError('TRUNCATED', `${file} ended before its signature`);
  return { written: writer.written, verified, header };
}

async function run(argv: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals: rest } = parseCommand(argv, OPTIONS);
  if (helpRequested(values, unpack, io)) return 0;
  const [file] = positionals(rest, ['file'], 'unpack') as [string];
  inputName(file, '<file>');
  const output = required(values.output, 'output', 'unpack');
  const service = await readService(values, io);
  const force = values.force === true;
  await checkFolderTarget(output, force, (text) => io.err(text));
  let folder: TempFolder | undefined;
  let result: Awaited<ReturnType<typeof unpackInto>>;
  try {
    result = await unpackInto(file, async () => (folder = await tempFolderFor(output, force)).path, io, values, service);
    await (folder as TempFolder).commit();
  } catch (error) {
    await folder?.discard();
    throw error;
  }
  const signer = toBase64Url(result.verified.publicKey);
  const verdict = await fileVerdict(result.verified, result.header, service);
  const claim = signerVerdict(result.verified, verdict);
  if (values.json === true) {
    printJson(io, { file, output, files: result.written, signer, signerInfo: result.verified.signer, signerVerdict: claim,
      ...(verdict === undefined ? {} : { verdict: verdictJson(verdict) }) });
  } else {
    io.out(`unpacked ${file} into ${output}: ${plural(result.written.length, 'file')}; signature verified (signer ${signer})\n`);
    if (claim.claim !== 'key' || !claim.verified) io.out(`${file}: ${signerLine(result.verified, verdict)}\n`);
  }
  return 0;
}

/** The `unpack` command. */
export const unpack: Command = { name: 'unpack', summary: 'check a .iki / .ikm file and write its files into a folder', usage: USAGE, run };
