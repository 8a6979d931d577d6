/**
 * Webhook signatures as shops expect them (issue 26 item 4): the header
 * `Iki-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>`, the scheme
 * Stripe documents for `Stripe-Signature` ("Verify webhook signatures with official libraries",
 * manual verification: the signed payload is the timestamp, a dot and the raw body; the scheme
 * is `v1`; several `v1` entries may be present while a secret is rolled; compare in constant
 * time; refuse a timestamp outside a tolerance, 300 s by default, against replays). So
 * `verifyWebhookSignature` also checks a `Stripe-Signature` header with a Stripe endpoint secret.
 *
 * WebCrypto HMAC, so it runs alike in Node 20+ and browsers. The secret is a string (JavaScript
 * cannot zeroize one); the imported `CryptoKey` is not extractable. The body must be the raw
 * bytes or text as received: a body parsed and serialised again does not verify.
 */

/** Seconds a signature's timestamp may differ from now, by default (Stripe's default too). */
export const WEBHOOK_TOLERANCE_SECONDS = 300;
/** Longest header read: a few signatures; anything longer is refused before parsing. */
const MAX_HEADER_CHARS = 4096;

/** Why a signature was refused; `valid` is true only for a match within the tolerance. */
export type WebhookVerdict =
  | { valid: true; timestamp: number }
  | { valid: false; reason: 'malformed' | 'no_signature' | 'timestamp_outside_tolerance' | 'mismatch' };

const encoder = new TextEncoder();

async function hmacHex(secret: string, message: Uint8Array<ArrayBuffer>): Promise<string> {
  const key = await crypto.subtle.importKey('raw', encoder.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  const mac = new Uint8Array(await crypto.subtle.sign('HMAC', key, message));
  return [...mac].map((b) => b.toString(16).padStart(2, '0')).join('');
}

/** "<t>." followed by the body's bytes. */
function signedPayload(timestamp: number, body: Uint8Array | string): Uint8Array<ArrayBuffer> {
  const head = encoder.encode(`${timestamp}.`);
  const bytes = typeof body === 'string' ? encoder.encode(body) : body;
  const out = new Uint8Array(head.length + bytes.length);
  out.set(head);
  out.set(bytes, head.length);
  return out;
}

/** Equality of two equal-length hex strings that takes the same time wherever they differ. */
function sameHex(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i += 1) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

function checkArguments(secret: unknown, body: unknown): void {
  if (typeof secret !== 'string' || secret === '') throw new TypeError('secret must be a non-empty string');
  if (typeof body !== 'string' && !(body instanceof Uint8Array)) throw new TypeError('body must be the raw body, a Uint8Array or a string');
}

/** The header value for `body` signed with `secret` at `timestamp` (unix seconds). */
export async function signWebhook(secret: string, body: Uint8Array | string, timestamp: number): Promise<string> {
  checkArguments(secret, body);
  if (!Number.isSafeInteger(timestamp) || timestamp < 0) throw new RangeError('timestamp must be whole unix seconds');
  return `t=${timestamp},v1=${await hmacHex(secret, signedPayload(timestamp, body))}`;
}

/**
 * Checks a signature header (`Iki-Signature`, or Stripe's `Stripe-Signature`) over the raw
 * `body` with the endpoint's `secret`: valid when one `v1` signature matches and the timestamp
 * is within `toleranceSeconds` of `now` (inclusive; 0 turns the check off, as Stripe's
 * libraries do). Unknown schemes (`v0`, ...) are ignored.
 */
export async function verifyWebhookSignature(secret: string, header: string, body: Uint8Array | string,
  options: { toleranceSeconds?: number; now?: Date } = {}): Promise<WebhookVerdict> {
  checkArguments(secret, body);
  if (typeof header !== 'string' || header.length > MAX_HEADER_CHARS) return { valid: false, reason: 'malformed' };
  const tolerance = options.toleranceSeconds ?? WEBHOOK_TOLERANCE_SECONDS;
  if (!Number.isFinite(tolerance) || tolerance < 0) throw new RangeError('toleranceSeconds must be 0 or more');
  let timestamp: number | undefined;
  const signatures: string[] = [];
  for (const part of header.split(',')) {
    const at = part.indexOf('=');
    if (at <= 0) return { valid: false, reason: 'malformed' };
    const [name, value] = [part.slice(0, at).trim(), part.slice(at + 1).trim()];
    if (name === 't') {
      if (timestamp !== undefined || !/^[0-9]{1,15}$/.test(value)) return { valid: false, reason: 'malformed' };
      timestamp = Number(value);
    } else if (name === 'v1' && /^[0-9a-f]{64}$/.test(value)) signatures.push(value);
  }
  if (timestamp === undefined) return { valid: false, reason: 'malformed' };
  if (signatures.length === 0) return { valid: false, reason: 'no_signature' };
  const now = Math.floor((options.now ?? new Date()).getTime() / 1000);
  if (tolerance > 0 && Math.abs(now - timestamp) > tolerance) return { valid: false, reason: 'timestamp_outside_tolerance' };
  const expected = await hmacHex(secret, signedPayload(timestamp, body));
  let matched = false;
  for (const signature of signatures) matched = sameHex(signature, expected) || matched;
  return matched ? { valid: true, timestamp } : { valid: false, reason: 'mismatch' };
}
