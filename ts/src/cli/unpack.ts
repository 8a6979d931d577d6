/**
 * `iki unpack <file> -o <dir>`: writes a container's entries back as files. Model textures
 * (`rgba8`) become PNG files under their PNG paths; project assets go back to their original
 * names (`meta.assetNames`). Every path is checked again (`../package/layout.ts`). Files are
 * written into a temporary folder and moved into place only after the signature verified, so
 * a damaged or tampered file leaves nothing behind. The temporary folder is made only once the
 * file is unlocked and its manifest read: until then nothing is on disk, so Ctrl-C or SIGTERM
 * during a password's key derivation ends the process at once with nothing to clean; later,
 * they stop the read at the next chunk and the folder is removed (`atomic.ts`).
 */
import { mkdir, open, type FileHandle } from 'node:fs/promises';
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
signature. Model textures are written as PNG files; project assets get their names back.

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

/** The entry being written: its open files, or its pixels until the last chunk. */
interface Open {
  files: FileHandle[];
  pixels?: { data: Uint8Array; filled: number; width: number; height: number };
}

/** Writes entries into `root` as chunks arrive. */
class EntryWriter {
  private current: Open | undefined;
  private currentEntry = -1;
  readonly written: string[] = [];

  constructor(private readonly root: string, private readonly manifest: Manifest, private readonly layout: string[][]) {}

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
    this.current = { files };
    this.currentEntry = entry;
    for (const path of paths) {
      const full = joinInside(this.root, path);
      await mkdir(dirname(full), { recursive: true });
      files.push(await open(full, 'wx'));
      this.written.push(path);
    }
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
