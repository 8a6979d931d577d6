/**
 * `iki unpack <file> -o <dir>`: writes a container's entries back as files. Model textures
 * (`rgba8`) become PNG files under their PNG paths; project assets go back to their original
 * names (`meta.assetNames`). Every path is checked again (`../package/layout.ts`). Files are
 * written into a temporary folder and moved into place only after the signature verified, so
 * a damaged or tampered file leaves nothing behind.
 */
import { mkdir, open, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { EntryInfo, Header, Kind, Manifest, Verified } from '../container.js';
import { encodePng } from '../image.js';
import { toBase64Url } from '../keys.js';
import { joinInside, unpackLayout } from '../package/index.js';
import { helpRequested, parseCommand, positionals, printJson, required, type Command } from './args.js';
import { tempFolderFor } from './atomic.js';
import { CliError } from './errors.js';
import type { CliIo } from './io.js';
import { UNLOCK_OPTIONS, unlockPlan, type UnlockValues } from './keyfiles.js';
import { readFileEvents } from './read.js';
import { fileVerdict, keyRequired, readService, SERVICE_READ_HELP, SERVICE_READ_OPTIONS, verdictJson, verdictLine, withAccount, type ReadService } from './verdict.js';

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

/** Largest texture unpacked, in bytes of RGBA8 (it is held whole to encode a PNG): 1 GiB, 16384 x 16384. */
export const MAX_UNPACK_TEXTURE_BYTES = 1024 * 1024 * 1024;

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
      const { width = 0, height = 0 } = info.meta ?? {};
      if (info.size > MAX_UNPACK_TEXTURE_BYTES) {
        throw new CliError('TOO_LARGE', `${info.path} is ${width} x ${height}; unpack writes textures up to ${MAX_UNPACK_TEXTURE_BYTES} bytes of pixels`);
      }
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

async function unpackInto(file: string, root: string, io: CliIo, values: UnlockValues, service: ReadService) {
  const plan = withAccount(await unlockPlan(values, io), service);
  let kind: Kind | undefined;
  let header: Header | undefined;
  let writer: EntryWriter | undefined;
  let verified: Verified | undefined;
  try {
    for await (const event of readFileEvents(file, io, plan, 'unpacking')) {
      if (event.type === 'header') {
        kind = event.header.kind;
        header = event.header;
      } else if (event.type === 'locked' && !plan.given) {
        throw keyRequired(file, event.slots);
      } else if (event.type === 'manifest') {
        writer = new EntryWriter(root, event.manifest, unpackLayout(kind ?? 'project', event.manifest));
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
  const output = required(values.output, 'output', 'unpack');
  const service = await readService(values, io);
  const folder = await tempFolderFor(output, values.force === true);
  let result: Awaited<ReturnType<typeof unpackInto>>;
  try {
    result = await unpackInto(file, folder.path, io, values, service);
    await folder.commit();
  } catch (error) {
    await folder.discard();
    throw error;
  }
  const signer = toBase64Url(result.verified.publicKey);
  const verdict = await fileVerdict(result.verified, result.header, service);
  if (values.json === true) {
    printJson(io, { file, output, files: result.written, signer, signerInfo: result.verified.signer,
      ...(verdict === undefined ? {} : { verdict: verdictJson(verdict) }) });
  } else {
    io.out(`unpacked ${file} into ${output}: ${result.written.length} files; signature verified (signer ${signer})\n`
      + (verdict === undefined ? '' : `signed by: ${verdictLine(verdict, service)}\n`));
  }
  return 0;
}

/** The `unpack` command. */
export const unpack: Command = { name: 'unpack', summary: 'check a .iki / .ikm file and write its files into a folder', usage: USAGE, run };
