/**
 * `iki watermark embed` and `iki watermark read`: the per-license texture watermark
 * (docs/watermark.md) on image files, for testing marks and reading a leaked texture by hand.
 * The 32-byte key is given in hex on the command line, as the service derives it per master
 * (docs/format.md section 8.4); its bytes are zeroized once inside WASM.
 */
import { stat } from 'node:fs/promises';
import { extname } from 'node:path';
import { decodeImage, encodePng } from '../image.js';
import { readModelFolder } from '../package/index.js';
import type { NotFoundReason } from '../service.js';
import { matchLicenses, MAX_ISSUED_LICENSES, type LicenseMatch } from '../license-match.js';
import { embedWatermark, Suspect, WatermarkKey, type InformedDetection, type SuspectDetection } from '../watermark.js';
import { helpRequested, parseCommand, parseHex, positionals, printJson, required, type Command } from './args.js';
import { writeFileAtomic } from './atomic.js';
import { UsageError } from './errors.js';
import { readInput } from './files.js';
import type { CliIo } from './io.js';

const USAGE = `Usage: iki watermark embed --key <64 hex> --id <16 hex> <in> <out.png> [--force]
       iki watermark read --key <64 hex> [--original <texture or model folder>] [--licenses <file>] <image>

For operators, who hold watermark keys. Sellers identify a leak on the seller page or
with POST /api/licenses/masters/{id}/identify, which needs no key.

embed  marks every visible pixel of <in> (PNG, JPEG or WebP) with the 64-bit license id
       and writes <out.png> (always a PNG: the output's name must end in .png)
read   looks for a mark in <image> (PNG, JPEG or WebP) and prints
       {"found": true|false, "licenseId": "<16 hex>"|null, "confidence": <number>,
        "method": "blind"|"registered", ...} (exit status 0 whether or not a mark is found).
       With --original, an image that does not read as it is gets registered on each
       unmarked original texture (a PNG, or every texture of a model folder): resized from
       25 % to 400 %, turned up to 5 degrees, cropped to a tenth of a texture or drawn over a
       background (a screenshot), it is read there, and the answer
       adds "texture" (path, scale, offset, region, similarity) or, when nothing was found,
       "reason" (too_small, too_busy, no_matching_texture, not_marked, time_budget, mixed).
       With --licenses, every issued license is scored against each read: one whose bits no
       longer decode is still named ("match": "scored"), a mix of several copies says
       "mixed": true, and "candidates" lists the best scores with their false-accusation
       probability (docs/watermark.md section 12)

      --key <64 hex>       the master's 32-byte watermark key, derived from the service's
                           root secret (README "Reading a watermark without the service")
      --id <16 hex>        the license id to embed
      --original <path>    the unmarked texture (PNG, JPEG, WebP) or model folder
      --budget <seconds>   time limit of the search with --original (default 60)
      --licenses <file>    the ids of the licenses issued for the master, 16 hex digits
                           each, separated by white space or commas (# starts a comment)
      --force              replace an existing <out.png>
      --json               print the result of embed as JSON (read always prints JSON)
  -h, --help               show this help
`;

const OPTIONS = {
  key: { type: 'string' }, id: { type: 'string' }, force: { type: 'boolean' }, original: { type: 'string' },
  budget: { type: 'string' }, licenses: { type: 'string' },
} as const;

/** Default time limit of `read --original`, in seconds. */
const DEFAULT_BUDGET_S = 60;

async function withKey<T>(hex: string | undefined, use: (key: WatermarkKey) => T | Promise<T>): Promise<T> {
  const bytes = parseHex(required(hex, 'key', 'watermark'), 32, 'key');
  const key = WatermarkKey.fromBytes(bytes);
  bytes.fill(0);
  try {
    return await use(key);
  } finally {
    key.free();
  }
}

async function readImage(file: string) {
  return decodeImage(new Uint8Array(await readInput(file, 'the image')));
}

async function embed(values: { key?: string; id?: string; force?: boolean; json?: boolean }, args: string[], io: CliIo): Promise<number> {
  const [input, output] = positionals(args, ['in', 'out.png'], 'watermark embed') as [string, string];
  if (extname(output).toLowerCase() !== '.png') {
    throw new UsageError(`${output}: embed writes a PNG (a lossy format would weaken the mark); name the output .png`);
  }
  const idHex = required(values.id, 'id', 'watermark embed');
  if (!/^[0-9a-fA-F]{16}$/u.test(idHex)) throw new UsageError('--id must be 16 hex digits');
  const image = await readImage(input);
  const marked = await withKey(values.key, (key) => embedWatermark(key, BigInt(`0x${idHex}`), image.width, image.height, image.rgba));
  const png = encodePng(image.width, image.height, marked);
  await writeFileAtomic(output, values.force === true, undefined, async (file) => {
    await file.writeFile(png);
  }, (text) => io.err(text));
  const licenseId = idHex.toLowerCase();
  if (values.json === true) printJson(io, { input, output, width: image.width, height: image.height, licenseId });
  else io.out(`marked ${input} (${image.width} x ${image.height}) with ${licenseId} into ${output}\n`);
  return 0;
}

/** One unmarked original texture: a label for the answer and its pixels, read lazily. */
interface Original {
  path: string;
  load(): Promise<{ width: number; height: number; rgba: Uint8Array }>;
}

async function originals(path: string): Promise<Original[]> {
  if (!(await stat(path)).isDirectory()) return [{ path, load: () => readImage(path) }];
  const folder = await readModelFolder(path);
  return folder.entries.filter((e) => e.meta?.kind === 'texture').map((entry) => ({
    path: entry.path,
    async load() {
      const parts: Uint8Array[] = [];
      for await (const part of entry.data) parts.push(part);
      const rgba = parts.length === 1 ? parts[0] as Uint8Array : new Uint8Array(Buffer.concat(parts));
      return { width: entry.meta?.width ?? 0, height: entry.meta?.height ?? 0, rgba };
    },
  }));
}

function budgetMs(text: string | undefined): number {
  if (text === undefined) return DEFAULT_BUDGET_S * 1000;
  const seconds = Number(text);
  if (!/^\d+(\.\d+)?$/u.test(text) || !(seconds > 0) || seconds > 3600) throw new UsageError('--budget must be 0.001 to 3600 seconds');
  return seconds * 1000;
}

/** The issued license ids of a `--licenses` file. */
async function issuedFile(file: string): Promise<string[]> {
  const text = new TextDecoder('utf-8', { fatal: true }).decode(await readInput(file, 'the license list'));
  const ids: string[] = [];
  for (const [n, line] of text.split(/\r?\n/u).entries()) {
    for (const word of (line.split('#')[0] ?? '').split(/[\s,]+/u).filter((w) => w !== '')) {
      if (!/^[0-9a-fA-F]{16}$/u.test(word)) throw new UsageError(`${file}:${n + 1}: ${JSON.stringify(word.slice(0, 40))} is not a license id of 16 hex digits`);
      if (ids.length === MAX_ISSUED_LICENSES) throw new UsageError(`${file}: more than ${MAX_ISSUED_LICENSES} license ids`);
      ids.push(word.toLowerCase());
    }
  }
  return ids;
}

/** Scores the issued licenses against reads; keeps the strongest match (docs/watermark.md section 12). */
class Scorer {
  best: { match: LicenseMatch; read: SuspectDetection; texture?: Record<string, unknown> } | undefined;

  constructor(private readonly issued: readonly string[] | undefined) {}

  /** Scores `read` as one of `tests` reads; true when it names someone. */
  score(read: SuspectDetection, tests: number, texture?: Record<string, unknown>): boolean {
    if (this.issued === undefined || read.bits === undefined) return false;
    const match = matchLicenses(read.bits, read.confidence, this.issued, tests);
    const strongest = (m: LicenseMatch) => Math.min(1, ...m.candidates.map((c) => c.falseAccusation));
    if (this.best === undefined || strongest(match) < strongest(this.best.match)) this.best = { match, read, ...(texture === undefined ? {} : { texture }) };
    return match.candidates.some((c) => c.named);
  }

  /** The fields the answer gains with --licenses. */
  fields(): Record<string, unknown> {
    if (this.issued === undefined) return {};
    return { mixed: this.best?.match.mixed ?? false, candidates: this.best?.match.candidates ?? [] };
  }
}

/** The informed search over `list`, best match kept; stops at the first read or named license. */
async function search(key: WatermarkKey, suspect: Suspect, list: Original[], limitMs: number, scorer: Scorer) {
  const deadline = Date.now() + limitMs;
  let best: { path: string; width: number; height: number; read: InformedDetection } | undefined;
  let outOfTime = false;
  for (const original of list) {
    const left = deadline - Date.now();
    if (left <= 0) {
      outOfTime = true;
      break;
    }
    const texture = await original.load();
    const read = suspect.readInformed(key, texture.width, texture.height, texture.rgba, left);
    if (!read.complete && !read.found) outOfTime = true;
    if (read.registration !== undefined && (best === undefined || read.found
      || (!best.read.found && read.registration.similarity > (best.read.registration?.similarity ?? 0)))) {
      best = { path: original.path, width: texture.width, height: texture.height, read };
    }
    // Half the false-accusation budget is the blind read's, half is shared by the textures.
    const where = read.registration === undefined ? undefined : { path: original.path, width: texture.width, height: texture.height, ...read.registration };
    const named = read.registration !== undefined && scorer.score(read, 2 * list.length, where);
    if (read.found || named) break;
  }
  return { best, outOfTime };
}

/** The answer when no read decoded but the scores name someone (or say the read is a mix). */
function scoredAnswer(scorer: Scorer): Record<string, unknown> | undefined {
  const best = scorer.best;
  if (best === undefined || !best.match.candidates.some((c) => c.named)) return undefined;
  const single = best.match.mixed ? undefined : best.match.candidates.find((c) => c.named);
  return {
    found: single !== undefined, licenseId: single?.licenseId ?? null, confidence: best.read.confidence,
    method: best.texture === undefined ? 'blind' : 'registered', match: single === undefined ? 'decoded' : 'scored',
    ...(best.texture === undefined ? {} : { texture: best.texture }), ...(single === undefined ? { reason: 'mixed' } : {}),
    ...scorer.fields(),
  };
}

async function read(values: { key?: string; force?: boolean; id?: string; original?: string; budget?: string; licenses?: string },
  args: string[], io: CliIo): Promise<number> {
  const [input] = positionals(args, ['image'], 'watermark read') as [string];
  if (values.id !== undefined || values.force !== undefined) throw new UsageError('--id and --force apply to watermark embed only');
  if (values.budget !== undefined && values.original === undefined) throw new UsageError('--budget applies to read --original only');
  const limitMs = budgetMs(values.budget);
  const issued = values.licenses === undefined ? undefined : await issuedFile(values.licenses);
  const list = values.original === undefined ? undefined : await originals(values.original);
  const image = await readImage(input);
  const scorer = new Scorer(issued);
  const answer = await withKey(values.key, async (key) => {
    const suspect = Suspect.of(image.width, image.height, image.rgba);
    try {
      const blind = suspect.detect(key);
      const blindNamed = scorer.score(blind, 2);
      const extra = issued === undefined ? {} : { match: 'decoded', ...scorer.fields() };
      const plain = { found: blind.found, licenseId: blind.found ? (blind.licenseId ?? null) : null, confidence: blind.confidence, method: 'blind', ...extra };
      if (blind.found) return plain;
      if (blindNamed || list === undefined) return scoredAnswer(scorer) ?? { ...plain, ...mixedReason(blind, scorer) };
      const { best, outOfTime } = await search(key, suspect, list, limitMs, scorer);
      const found = best?.read.found === true;
      if (!found) {
        const scored = scoredAnswer(scorer);
        if (scored !== undefined) return scored;
      }
      const texture = best?.read.registration === undefined ? undefined
        : { path: best.path, width: best.width, height: best.height, ...best.read.registration };
      let reason: NotFoundReason | undefined;
      if (!found) {
        const capacity = suspect.capacity(key);
        if (scorer.best?.match.mixed === true) reason = 'mixed';
        else if (outOfTime) reason = 'time_budget';
        else if (texture !== undefined) reason = 'not_marked';
        else if (!capacity.reads) reason = capacity.visiblePixels < 64 * 64 ? 'too_small' : 'too_busy';
        else reason = 'no_matching_texture';
      }
      return {
        found, licenseId: found ? (best?.read.licenseId ?? null) : null,
        confidence: best?.read.confidence ?? blind.confidence, method: texture === undefined ? 'blind' : 'registered',
        ...(texture === undefined ? {} : { texture }), ...(reason === undefined ? {} : { reason }),
        ...(issued === undefined ? {} : { match: 'decoded', ...scorer.fields() }),
      };
    } finally {
      suspect.free();
    }
  });
  printJson(io, answer);
  return 0;
}

/** `reason: mixed` for a blind read (without --original) that looks like a mix. */
function mixedReason(blind: SuspectDetection, scorer: Scorer): Record<string, unknown> {
  return !blind.found && scorer.best?.match.mixed === true ? { reason: 'mixed' } : {};
}

async function run(argv: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals: args } = parseCommand(argv, OPTIONS);
  if (helpRequested(values, watermark, io)) return 0;
  const [action, ...rest] = args;
  if (action === 'embed') return embed(values, rest, io);
  if (action === 'read') return read(values, rest, io);
  throw new UsageError(action === undefined ? 'missing embed or read (see iki watermark --help)' : `unknown action ${JSON.stringify(action)}; use embed or read`);
}

/** The `watermark` command. */
export const watermark: Command = { name: 'watermark', summary: 'embed or read a license watermark with its key (operators)', usage: USAGE, run };
