/**
 * Key material from the user's files: the Ed25519 signing key (`--key`), the X25519 identity
 * (`--identity`), recipients' public keys (`--recipient`), and the unlock a reader uses. Key
 * file bytes are zeroized as soon as the key is inside WASM; the handles are freed by the
 * caller in `finally`.
 */
import type { SlotInfo, Unlock } from '../container.js';
import type { IkiError } from '../errors.js';
import { decodeKeyFile, fromBase64Url, SigningKey, X25519Identity } from '../keys.js';
import { CliError, UsageError } from './errors.js';
import { readInput } from './files.js';
import type { CliIo } from './io.js';
import { promptPassword, readPasswordFile } from './prompt.js';

/** Largest key file read, in bytes (they are a few lines of text). */
const MAX_KEY_FILE_BYTES = 64 * 1024;

/** Reads and decodes a key file, which must hold a key of `kind`. */
export async function readKeyFile(file: string, kind: 'ed25519' | 'x25519'): Promise<Uint8Array> {
  const bytes = await readInput(file, kind === 'x25519' ? '--identity' : '--key');
  if (bytes.length > MAX_KEY_FILE_BYTES) throw new CliError('INVALID_ARGUMENT', `${file} is not a key file (too large)`);
  const decoded = decodeKeyFile(bytes.toString('utf8'));
  bytes.fill(0);
  if (decoded.kind !== kind) {
    decoded.secret.fill(0);
    const hint = kind === 'x25519' ? 'an X25519 identity (iki keygen --x25519)' : 'an Ed25519 signing key (iki keygen)';
    throw new CliError('INVALID_ARGUMENT', `${file} holds an ${decoded.kind} key; ${hint} is needed here`);
  }
  return decoded.secret;
}

/** The signing key in `file`. */
export async function loadSigningKey(file: string): Promise<SigningKey> {
  const seed = await readKeyFile(file, 'ed25519');
  try {
    return SigningKey.fromSeed(seed);
  } finally {
    seed.fill(0);
  }
}

/** The X25519 identity in `file`. */
export async function loadIdentity(file: string): Promise<X25519Identity> {
  const secret = await readKeyFile(file, 'x25519');
  try {
    return X25519Identity.fromBytes(secret);
  } finally {
    secret.fill(0);
  }
}

/** A recipient's 32-byte X25519 public key from base64url. */
export function parseRecipient(text: string): Uint8Array {
  try {
    return fromBase64Url(text.trim(), 32);
  } catch {
    throw new UsageError(`--recipient ${JSON.stringify(text)} is not a base64url X25519 public key (43 characters)`);
  }
}

/** The options that unlock an encrypted file. */
export const UNLOCK_OPTIONS = {
  password: { type: 'boolean' },
  'password-file': { type: 'string' },
  identity: { type: 'string' },
} as const;

/** Values of {@link UNLOCK_OPTIONS}. */
export interface UnlockValues {
  password?: boolean;
  'password-file'?: string;
  identity?: string;
}

/** An unlock for a reader, and what must be freed once reading ends. */
export interface UnlockPlan {
  /** Whether a key option was given at all. */
  given: boolean;
  /**
   * For `readContainer`: asked only once the file turns out to be encrypted, and asked again
   * with the refusal after a key that did not open (it then throws, or prompts again).
   */
  unlock?: (slots: SlotInfo[], refused?: IkiError) => Promise<Unlock | undefined>;
  free(): void;
}

/**
 * Builds the unlock from `--password`, `--password-file` or `--identity` (at most one). Key
 * files are read now, so a missing one fails before any work; the password prompt waits
 * until the file turns out to have a password slot.
 */
export async function unlockPlan(values: UnlockValues, io: CliIo): Promise<UnlockPlan> {
  const chosen = [values.password === true, values['password-file'] !== undefined, values.identity !== undefined].filter(Boolean);
  if (chosen.length > 1) throw new UsageError('give only one of --password, --password-file and --identity');
  if (values.identity !== undefined) {
    const identity = await loadIdentity(values.identity);
    return { given: true, unlock: once({ identity }), free: () => identity.free() };
  }
  if (values['password-file'] !== undefined) {
    return { given: true, unlock: once({ password: await readPasswordFile(values['password-file']) }), free: () => undefined };
  }
  if (values.password !== true) return { given: false, free: () => undefined };
  let tries = 0;
  const unlock = async (slots: SlotInfo[], refused?: IkiError): Promise<Unlock> => {
    if (!slots.some((s) => s.type === 'password')) throw new CliError('KEY_REQUIRED', 'the file has no password slot');
    if (refused !== undefined) {
      if (tries >= MAX_PASSWORD_TRIES) throw refused;
      io.err('That password does not open the file. Try again.\n');
    }
    tries++;
    return { password: await promptPassword(io) };
  };
  return { given: true, unlock, free: () => undefined };
}

/** How often `--password` asks before giving up with the reader's refusal. */
export const MAX_PASSWORD_TRIES = 3;

/** An unlock that offers `key` once and rethrows its refusal. */
function once(key: Unlock): (slots: SlotInfo[], refused?: IkiError) => Promise<Unlock> {
  return async (_slots, refused) => {
    if (refused !== undefined) throw refused;
    return key;
  };
}
