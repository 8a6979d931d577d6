/**
 * Reading a container file for `inspect`, `verify` and `unpack`: the kind comes from the
 * magic (so a renamed file still opens as what it is), bytes stream from disk with a
 * progress bar, and the unlock is asked for only once the key slots are known.
 */
import { open, stat } from 'node:fs/promises';
import { extname } from 'node:path';
import { readContainer, type Kind, type Manifest, type ReadEvent, type SlotInfo } from '../container.js';
import type { IkiError } from '../errors.js';
import { textureTooLarge } from '../package/png.js';
import { fileSource } from '../package/sources.js';
import { CliError } from './errors.js';
import type { CliIo } from './io.js';
import type { UnlockPlan } from './keyfiles.js';
import { counted, Progress } from './progress.js';

const MAGIC: Record<Kind, readonly number[]> = {
  project: [0x89, 0x49, 0x4b, 0x49, 0x0d, 0x0a, 0x1a, 0x0a],
  model: [0x89, 0x49, 0x4b, 0x4d, 0x0d, 0x0a, 0x1a, 0x0a],
};

/**
 * The kind of file by its magic, or by as much of it as the file holds from its fourth byte on
 * (the kind byte), so that a truncated file is refused as `TRUNCATED`, not `WRONG_KIND`; by
 * its extension when the magic is neither (the reader then refuses it).
 */
export async function detectKind(file: string): Promise<Kind> {
  const handle = await open(file, 'r');
  try {
    const head = new Uint8Array(8);
    const { bytesRead } = await handle.read(head, 0, 8, 0);
    for (const kind of ['project', 'model'] as const) {
      if (bytesRead >= 4 && MAGIC[kind].slice(0, bytesRead).every((b, i) => head[i] === b)) return kind;
    }
  } finally {
    await handle.close();
  }
  return extname(file).toLowerCase() === '.ikm' ? 'model' : 'project';
}

/** The kind an output file name asks for: `.iki` project, `.ikm` model. */
export function kindOfName(file: string): Kind | undefined {
  const ext = extname(file).toLowerCase();
  return ext === '.iki' ? 'project' : ext === '.ikm' ? 'model' : undefined;
}

/** Size of the regular file `file` (`NOT_FOUND`, `IO_ERROR` otherwise). */
export async function fileSize(file: string): Promise<number> {
  const info = await stat(file);
  if (!info.isFile()) throw new CliError('IO_ERROR', `${file} is not a regular file`);
  return info.size;
}

/**
 * Refuses a texture (`rgba8` entry) beyond what the image codecs handle, before any of its
 * chunks is inflated: a small file of zeros can declare 60000 x 60000 pixels (14 GB) that
 * `unpack` could not write as a PNG and `verify` would spend minutes inflating and hashing.
 */
export function checkTextures(manifest: Manifest): void {
  for (const entry of manifest.entries) {
    if (entry.encoding !== 'rgba8') continue;
    const { width = 0, height = 0 } = entry.meta ?? {};
    const why = textureTooLarge(width, height);
    if (why !== undefined) throw new CliError('TOO_LARGE', `texture ${JSON.stringify(entry.path)}: ${why}; iki does not read it`);
  }
}

/**
 * The events of reading `file` (see `readContainer`). A progress bar labelled `label` runs on
 * a terminal stderr and is erased before a password prompt and at the end. After the
 * manifest is reported, a texture beyond {@link checkTextures} ends the read (`TOO_LARGE`);
 * `signal` stops it between chunks and between password slots.
 */
export async function* readFileEvents(file: string, io: CliIo, plan: UnlockPlan, label: string,
  signal?: AbortSignal): AsyncGenerator<ReadEvent> {
  const size = await fileSize(file);
  const kind = await detectKind(file);
  const progress = new Progress(io.stderr, label, size);
  const planned = plan.unlock;
  const unlock = planned === undefined ? undefined : (slots: SlotInfo[], refused?: IkiError) => {
    progress.finish();
    return planned(slots, refused);
  };
  try {
    const source = { [Symbol.asyncIterator]: () => counted(fileSource(file), progress) };
    const options = { kind, ...(unlock === undefined ? {} : { unlock }), ...(signal === undefined ? {} : { signal }) };
    for await (const event of readContainer(source, options)) {
      yield event;
      if (event.type === 'manifest') checkTextures(event.manifest);
    }
  } finally {
    progress.finish();
  }
}
