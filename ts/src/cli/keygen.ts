/**
 * `iki keygen`: makes an Ed25519 signing key or an X25519 identity file (mode 0600, never
 * replacing an existing file without `--force`), or prints the public key of an existing one.
 * The file format is `encodeKeyFile` (docs/format.md); the secret's bytes are zeroized once
 * encoded, and the handle is freed in `finally`.
 */
import { decodeKeyFile, encodeKeyFile, SigningKey, toBase64Url, X25519Identity } from '../keys.js';
import { helpRequested, parseCommand, positionals, printJson, type Command } from './args.js';
import { writeFileAtomic } from './atomic.js';
import { readInput } from './files.js';
import { CliError, UsageError } from './errors.js';
import type { CliIo } from './io.js';

const USAGE = `Usage: iki keygen [--x25519] -o <file> [--force]
       iki keygen [--x25519] --public <file>

Makes a new key file, or prints the public key of an existing one (base64url).

  -o, --output <file>   write a new key file (mode 0600)
      --x25519          an X25519 identity (a recipient of encrypted files) instead of an
                        Ed25519 signing key
      --public <file>   print the public key of the key file <file> (either kind;
                        with --x25519 it must be an X25519 identity)
      --force           replace an existing output file
      --json            print {kind, publicKey, file} as JSON
  -h, --help            show this help
`;

const OPTIONS = {
  output: { type: 'string', short: 'o' },
  x25519: { type: 'boolean' },
  public: { type: 'string' },
  force: { type: 'boolean' },
} as const;

type KeyKind = 'ed25519' | 'x25519';

/** Generates a key of `kind`; returns its public key and its key-file text. */
function generate(kind: KeyKind): { publicKey: Uint8Array; text: string } {
  const key = kind === 'ed25519' ? SigningKey.generate() : X25519Identity.generate();
  const secret = key instanceof SigningKey ? key.exportSeed() : key.exportSecret();
  try {
    return { publicKey: key.publicKey, text: encodeKeyFile(kind, secret) };
  } finally {
    secret.fill(0);
    key.free();
  }
}

/** The public key of the key file `file`, whatever its kind unless `x25519` demands one. */
async function publicKeyOf(file: string, x25519: boolean): Promise<{ kind: KeyKind; publicKey: Uint8Array }> {
  const text = (await readInput(file, '--public')).toString('utf8');
  const { kind, secret } = decodeKeyFile(text);
  try {
    if (x25519 && kind !== 'x25519') throw new CliError('INVALID_ARGUMENT', `${file} holds an ${kind} key, not an X25519 identity`);
    const key = kind === 'ed25519' ? SigningKey.fromSeed(secret) : X25519Identity.fromBytes(secret);
    try {
      return { kind, publicKey: key.publicKey };
    } finally {
      key.free();
    }
  } finally {
    secret.fill(0);
  }
}

/** What a new key is for, as the command that uses it next. */
function nextStep(kind: KeyKind, file: string): string {
  return kind === 'ed25519'
    ? `next: sign files with iki pack --key ${file}; to sell through an iki service, register it first:\n`
      + `  iki register-key --key ${file} --service <service address> --email <your e-mail>\n`
    : `next: give the public key to whoever packs files for you (iki pack --recipient <public key>),\n`
      + `  and open them with iki unpack <file> --identity ${file}\n`;
}

function report(io: CliIo, json: boolean, kind: KeyKind, publicKey: Uint8Array, file: string, created: boolean): void {
  const encoded = toBase64Url(publicKey);
  if (json) printJson(io, { kind, publicKey: encoded, file });
  else if (created) io.out(`${kind} key written to ${file}\npublic key: ${encoded}\n${nextStep(kind, file)}`);
  else io.out(`${encoded}\n`);
}

async function run(argv: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals: rest } = parseCommand(argv, OPTIONS);
  if (helpRequested(values, keygen, io)) return 0;
  positionals(rest, [], 'keygen');
  const kind: KeyKind = values.x25519 === true ? 'x25519' : 'ed25519';
  if ((values.output === undefined) === (values.public === undefined)) {
    throw new UsageError('give either -o <file> (new key) or --public <file> (see iki keygen --help)');
  }
  if (values.public !== undefined) {
    if (values.force === true) throw new UsageError('--force applies to -o only');
    const found = await publicKeyOf(values.public, values.x25519 === true);
    report(io, values.json === true, found.kind, found.publicKey, values.public, false);
    return 0;
  }
  const output = values.output as string;
  const { publicKey, text } = generate(kind);
  await writeFileAtomic(output, values.force === true, 0o600, async (file) => {
    await file.writeFile(text, 'utf8');
  });
  report(io, values.json === true, kind, publicKey, output, true);
  return 0;
}

/** The `keygen` command. */
export const keygen: Command = { name: 'keygen', summary: 'make a signing key or X25519 identity; print a public key', usage: USAGE, run };
