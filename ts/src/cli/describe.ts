/**
 * What `inspect` and `verify` show about a container: header, key slots, signer and
 * certificate, manifest. Everything shown comes from the file, so text output escapes control
 * characters (a crafted name cannot drive the terminal); JSON output is escaped by JSON.
 */
import type { Header, Manifest, SlotInfo, Verified } from '../container.js';
import { toBase64Url } from '../keys.js';
import { parseCertificate } from './certificate.js';
import { signerLine, signerVerdict } from './signer-verdict.js';
import type { Verdict } from '../project/verdict.js';
import { plural } from './args.js';
import { formatBytes } from './progress.js';

/** What reading a file revealed, as far as it got. */
export interface Findings {
  file: string;
  bytes: number;
  header?: Header;
  slots?: SlotInfo[];
  manifest?: Manifest;
  verified?: Verified;
  /** Whether every chunk was decrypted and checked (false: structure and signature only). */
  contentChecked: boolean;
  /** The signer's verdict (certificate and revocation checked with `--service`). */
  verdict?: Verdict;
}

/** `text` with control characters shown as `\u{..}`. */
export function show(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/gu, (c) => `\\u{${c.codePointAt(0)?.toString(16)}}`);
}

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex');

/** A time from the file as ISO 8601, or as a number when no date can show it. */
export function isoTime(ms: number): string {
  const date = new Date(ms);
  return Number.isNaN(date.getTime()) ? `${ms} ms after 1970` : date.toISOString();
}

/** A key slot as plain JSON. */
export function slotJson(slot: SlotInfo): Record<string, unknown> {
  return slot.type === 'recipient' ? { type: 'recipient', recipient: toBase64Url(slot.recipient) } : { ...slot };
}

function slotText(slot: SlotInfo): string {
  switch (slot.type) {
    case 'password': return `password (${slot.kdf === 1 ? 'Argon2id' : `KDF ${slot.kdf}`}, ${slot.mKib} KiB, ${slot.t} passes, ${slot.p} lanes)`;
    case 'recipient': return `recipient ${toBase64Url(slot.recipient)}`;
    case 'account': return `account ${show(slot.accountId)}`;
    case 'license': return `license ${show(slot.licenseId)} of master ${show(slot.masterId)} from ${show(slot.service)}`;
    default: return `unknown type ${slot.typeId} (${slot.length} bytes, skipped)`;
  }
}

/** The signer and its certificate, as plain JSON. */
export function signerJson(verified: Verified, verdict?: Verdict): Record<string, unknown> {
  const { certificate, ...rest } = verified.signer;
  const out: Record<string, unknown> = { publicKey: toBase64Url(verified.publicKey), ...rest };
  if (certificate !== undefined) {
    const parsed = parseCertificate(certificate);
    out.certificate = 'error' in parsed ? { malformed: parsed.error } : {
      accountId: parsed.accountId, issuerKey: toBase64Url(parsed.issuerKey),
      subjectMatchesSigner: hex(parsed.subjectKey) === hex(verified.publicKey),
      issued: isoTime(parsed.issuedMs), expires: parsed.expiresMs === 0 ? null : isoTime(parsed.expiresMs),
      checked: false,
    };
  }
  out.verdict = signerVerdict(verified, verdict);
  return out;
}

function certificateText(verified: Verified): string | undefined {
  const cert = signerJson(verified).certificate as Record<string, unknown> | undefined;
  if (cert === undefined) return undefined;
  if ('malformed' in cert) return `malformed (${String(cert.malformed)})`;
  return `account ${show(String(cert.accountId))}, issued ${String(cert.issued)}, expires ${String(cert.expires ?? 'never')}, `
    + `issuer ${String(cert.issuerKey)}${cert.subjectMatchesSigner === true ? '' : ', NOT for this signing key'} `
    + '(checked only against the key service\'s key: see the claim line)';
}

/**
 * The signer in words, its kind said once: `account acct_… "Name"`, `service https://…`,
 * `device "laptop"` (never "account account …" or "service service …").
 */
export function signerText(verified: Verified): string {
  const s = verified.signer;
  const name = s.name === undefined ? '' : `"${show(s.name)}"`;
  const id = s.kind === 'account' ? s.account : s.kind === 'service' ? s.service : undefined;
  const extra = [s.kind !== 'account' && s.account !== undefined ? `account ${show(s.account)}` : '',
    s.kind !== 'service' && s.service !== undefined ? `service ${show(s.service)}` : ''];
  const who = [s.kind, id === undefined ? '' : show(id), name, ...extra].filter(Boolean).join(' ');
  return `${who}, key ${toBase64Url(verified.publicKey)}`;
}

function entryLines(manifest: Manifest): string[] {
  const total = manifest.entries.reduce((n, e) => n + e.size, 0);
  const lines = [`entries:     ${manifest.entries.length} (${formatBytes(total)})`];
  for (const e of manifest.entries) {
    const size = e.meta?.width === undefined ? '' : `  ${e.meta.width}x${e.meta.height ?? '?'}`;
    lines.push(`  ${e.encoding.padEnd(8)}${formatBytes(e.size).padStart(11)}  ${show(e.type).padEnd(28)} ${show(e.path)}${size}`);
  }
  return lines;
}

/** Human-readable lines for `inspect`. */
export function findingsText(f: Findings): string {
  const lines = [`file:        ${f.file} (${formatBytes(f.bytes)})`];
  const h = f.header;
  if (h !== undefined) {
    lines.push(`kind:        ${h.kind === 'model' ? 'protected model file (.ikm)' : 'project file (.iki)'}, version ${h.major}.${h.minor}`,
      `created:     ${isoTime(h.createdMs)}`, `file id:     ${hex(h.fileId)}`, `chunk size:  ${h.chunkSize} bytes`,
      `encrypted:   ${h.encrypted ? `yes (XChaCha20-Poly1305), ${f.slots === undefined ? '? key slots' : plural(f.slots.length, 'key slot')}` : 'no'}`);
  }
  (f.slots ?? []).forEach((slot, i) => lines.push(`  slot ${i + 1}:    ${slotText(slot)}`));
  if (f.manifest !== undefined) {
    lines.push(`meta:        ${show(JSON.stringify(f.manifest.meta))}`, ...entryLines(f.manifest));
  } else if (h?.encrypted === true) {
    lines.push('manifest:    encrypted; give --password, --password-file or --identity to show it');
  }
  if (f.verified !== undefined) {
    lines.push(`signer:      ${signerText(f.verified)}`);
    const cert = certificateText(f.verified);
    if (cert !== undefined) lines.push(`certificate: ${cert}`);
    const claim = signerVerdict(f.verified, f.verdict);
    if (claim.claim !== 'key' || !claim.verified) lines.push(`claim:       ${signerLine(f.verified, f.verdict)}`);
    lines.push(`signature:   verified; ${f.contentChecked ? 'every chunk checked' : 'structure and signature only (content encrypted, no key given)'}`);
  }
  return `${lines.join('\n')}\n`;
}

/** Plain JSON for `inspect --json`. */
export function findingsJson(f: Findings): Record<string, unknown> {
  const h = f.header;
  return {
    file: f.file, bytes: f.bytes,
    header: h === undefined ? null : { kind: h.kind, version: `${h.major}.${h.minor}`, encrypted: h.encrypted, chunkSize: h.chunkSize,
      fileId: hex(h.fileId), created: isoTime(h.createdMs) },
    slots: (f.slots ?? []).map(slotJson),
    manifest: f.manifest ?? null,
    signer: f.verified === undefined ? null : signerJson(f.verified, f.verdict),
    verified: f.verified !== undefined,
    checked: f.verified === undefined ? null : f.contentChecked ? 'content' : 'structure-and-signature',
  };
}
