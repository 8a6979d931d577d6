/**
 * `iki inspect <file>` and `iki verify <file>`: read a whole container and report. Both check
 * the signature (SIGN is last, so reading to the end is the only way to name a verified
 * signer); with a key, or for an unencrypted file, every chunk is decrypted and checked too.
 * An encrypted file read without a key shows header, key slots and signer, never manifest
 * content.
 */
import type { SlotInfo } from '../container.js';
import type { IkiError } from '../errors.js';
import { helpRequested, parseCommand, plural, positionals, printJson, type Command } from './args.js';
import { type Findings, findingsJson, findingsText, signerJson } from './describe.js';
import { describeFailure } from './errors.js';
import { inputName } from './files.js';
import type { CliIo } from './io.js';
import { UNLOCK_OPTIONS, unlockPlan, type UnlockPlan, type UnlockValues } from './keyfiles.js';
import { fileSize, readFileEvents } from './read.js';
import { fileVerdict, readService, SERVICE_READ_HELP, SERVICE_READ_OPTIONS, verdictJson, withAccount, type ReadService } from './verdict.js';
import { signerLine } from './signer-verdict.js';

const KEY_HELP = `      --password             unlock with a password typed at the terminal
      --password-file <file> unlock with the password on the first line of <file>
                             (- reads it from standard input)
      --identity <file>      unlock with an X25519 identity (iki keygen --x25519)
${SERVICE_READ_HELP}      --json                 print the result as JSON
  -h, --help                 show this help
`;

const INSPECT_USAGE = `Usage: iki inspect <file> [--password | --password-file <file> | --identity <file>]

Shows a .iki or .ikm file's header, key slots, signer (and certificate) and, when it can be
read without a key or a key is given, its manifest. Reads the whole file and checks the
signature; exits 1 if the file is damaged, after showing what could be read.

${KEY_HELP}`;

const VERIFY_USAGE = `Usage: iki verify <file> [--password | --password-file <file> | --identity <file>]

Checks a .iki or .ikm file. An unencrypted file, or an encrypted one with its key, is checked
completely (every chunk and the signature); an encrypted file without a key is checked for
structure and signature only, and the output says so.

Exit status: 0 valid, 1 invalid or damaged (the error code is on stderr), 2 usage error.

${KEY_HELP}`;

/** Reads `file` to the end, recording what it reveals into `findings`. */
async function readAll(file: string, io: CliIo, plan: UnlockPlan, label: string, findings: Findings): Promise<void> {
  const planned = plan.unlock;
  const recording: UnlockPlan = planned === undefined ? plan : {
    ...plan,
    unlock: (slots: SlotInfo[], refused?: IkiError) => {
      findings.slots = slots;
      return planned(slots, refused);
    },
  };
  try {
    for await (const event of readFileEvents(file, io, recording, label)) {
      if (event.type === 'header') findings.header = event.header;
      else if (event.type === 'locked') findings.slots = event.slots;
      else if (event.type === 'manifest') {
        findings.manifest = event.manifest;
        findings.contentChecked = true;
      } else if (event.type === 'end') findings.verified = event.verified;
    }
  } finally {
    plan.free();
  }
}

async function start(argv: readonly string[], io: CliIo, command: Command) {
  const { values, positionals: rest } = parseCommand(argv, { ...UNLOCK_OPTIONS, ...SERVICE_READ_OPTIONS });
  if (helpRequested(values, command, io)) return undefined;
  const [file] = positionals(rest, ['file'], command.name) as [string];
  inputName(file, '<file>');
  const findings: Findings = { file, bytes: await fileSize(file), contentChecked: false };
  const service = await readService(values, io);
  return { file, json: values.json === true, findings, service, plan: withAccount(await unlockPlan(values as UnlockValues, io), service) };
}

/** The verdict on what was read, when the signature verified. */
async function verdictOf(findings: Findings, service: ReadService) {
  if (findings.verified === undefined || findings.header === undefined) return undefined;
  return fileVerdict(findings.verified, findings.header, service);
}

async function runInspect(argv: readonly string[], io: CliIo): Promise<number> {
  const started = await start(argv, io, inspect);
  if (started === undefined) return 0;
  const { file, json, findings, plan, service } = started;
  try {
    await readAll(file, io, plan, 'reading', findings);
    const verdict = await verdictOf(findings, service);
    if (verdict !== undefined) findings.verdict = verdict;
  } finally {
    // What could be read is shown even when the file turns out damaged; the error follows.
    if (json) {
      printJson(io, { ...findingsJson(findings), ...(findings.verdict === undefined ? {} : { verdict: verdictJson(findings.verdict) }) });
    } else {
      io.out(findingsText(findings));
    }
  }
  return 0;
}

async function runVerify(argv: readonly string[], io: CliIo): Promise<number> {
  const started = await start(argv, io, verify);
  if (started === undefined) return 0;
  const { file, json, findings, plan, service } = started;
  try {
    await readAll(file, io, plan, 'verifying', findings);
  } catch (error) {
    if (json) {
      const { code, message } = describeFailure(error);
      printJson(io, { file, valid: false, error: { code, message } });
    }
    throw error;
  }
  const checked = findings.contentChecked ? 'content' : 'structure-and-signature';
  const entries = findings.manifest?.entries.length ?? null;
  const verdict = await verdictOf(findings, service);
  if (json) {
    printJson(io, { file, valid: true, checked, kind: findings.header?.kind, encrypted: findings.header?.encrypted, entries,
      signer: findings.verified === undefined ? null : signerJson(findings.verified, verdict),
      ...(verdict === undefined ? {} : { verdict: verdictJson(verdict) }) });
  } else {
    io.out(findings.contentChecked
      ? `${file}: valid; signature verified and every chunk checked (${plural(entries ?? 0, 'entry')})\n`
      : `${file}: valid as far as checked; structure and signature verified, content not checked (encrypted; no key given)\n`);
    // Who signed, always: an account claim says whether it held (and the key's revocation).
    if (findings.verified !== undefined) io.out(`${file}: ${signerLine(findings.verified, verdict)}\n`);
  }
  return 0;
}

/** The `inspect` command. */
export const inspect: Command = { name: 'inspect', summary: 'show header, key slots, signer and manifest of a file', usage: INSPECT_USAGE, run: runInspect };
/** The `verify` command. */
export const verify: Command = { name: 'verify', summary: 'check a file: exit 0 valid, 1 invalid, 2 usage error', usage: VERIFY_USAGE, run: runVerify };
