/**
 * `iki watermark embed` and `iki watermark read`: the per-license texture watermark
 * (docs/watermark.md) on image files, for testing marks and reading a leaked texture by hand.
 * The 32-byte key is given in hex on the command line, as the service derives it per master
 * (docs/format.md section 8.4); its bytes are zeroized once inside WASM.
 */
import { extname } from 'node:path';
import { decodeImage, encodePng } from '../image.js';
import { detectWatermark, embedWatermark, WatermarkKey } from '../watermark.js';
import { helpRequested, parseCommand, parseHex, positionals, printJson, required, type Command } from './args.js';
import { writeFileAtomic } from './atomic.js';
import { UsageError } from './errors.js';
import { readInput } from './files.js';
import type { CliIo } from './io.js';

const USAGE = `Usage: iki watermark embed --key <64 hex> --id <16 hex> <in> <out.png> [--force]
       iki watermark read --key <64 hex> <image>

embed  marks every visible pixel of <in> (PNG, JPEG or WebP) with the 64-bit license id
       and writes <out.png> (always a PNG: the output's name must end in .png)
read   looks for a mark in <image> (PNG, JPEG or WebP) without the original and prints
       {"found": true|false, "licenseId": "<16 hex>"|null, "confidence": <number>}
       (exit status 0 whether or not a mark is found)

      --key <64 hex>   the 32-byte watermark key
      --id <16 hex>    the license id to embed
      --force          replace an existing <out.png>
      --json           print the result of embed as JSON (read always prints JSON)
  -h, --help           show this help
`;

const OPTIONS = { key: { type: 'string' }, id: { type: 'string' }, force: { type: 'boolean' } } as const;

async function withKey<T>(hex: string | undefined, use: (key: WatermarkKey) => T): Promise<T> {
  const bytes = parseHex(required(hex, 'key', 'watermark'), 32, 'key');
  const key = WatermarkKey.fromBytes(bytes);
  bytes.fill(0);
  try {
    return use(key);
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

async function read(values: { key?: string; force?: boolean; id?: string }, args: string[], io: CliIo): Promise<number> {
  const [input] = positionals(args, ['image'], 'watermark read') as [string];
  if (values.id !== undefined || values.force !== undefined) throw new UsageError('--id and --force apply to watermark embed only');
  const image = await readImage(input);
  const found = await withKey(values.key, (key) => detectWatermark(key, image.width, image.height, image.rgba));
  printJson(io, { found: found.found, licenseId: found.found ? (found.licenseId ?? null) : null, confidence: found.confidence });
  return 0;
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
export const watermark: Command = { name: 'watermark', summary: 'embed or read a license watermark in an image', usage: USAGE, run };
