/**
 * Plain words for errors a person meets in the pages (and in an editor app): the API's codes
 * ({@link ApiProblem}), the container's codes (`IkiError`, docs/format.md section 11) and
 * anything else, as one sentence without internals. The code and request id are shown
 * beside these words by the page, not inside them.
 */
import { ApiProblem } from './api.js';

/** Plain words for the codes a person is likely to meet; the API's message otherwise. */
const WORDS: Readonly<Record<string, string>> = {
  NETWORK: 'The service could not be reached. Check the connection and try again.',
  UNAUTHENTICATED: 'Your session has ended. Please sign in again.',
  INVALID_CREDENTIALS: 'That e-mail address and password do not match an account.',
  EMAIL_TAKEN: 'An account with this e-mail address already exists. Sign in instead.',
  VERIFICATION_INVALID: 'This verification link is not valid any more: it was used already, a newer link replaced it, or it expired.',
  SIGN_UP_PASSWORD_REQUIRED: 'This link was opened in another browser than the one that signed up: choose the account\'s password to finish.',
  SESSION_NOT_FOUND: 'That session has already ended.',
  ACCOUNT_AMBIGUOUS: 'Several accounts have this e-mail address. License the buyer by their account id instead.',
  LICENSE_CREATION_THROTTLED: 'You created many licenses in the last hour.',
  VALIDATION_FAILED: 'Some of the information is not in the expected form.',
  ACCOUNT_NOT_FOUND: 'No account has this id or verified e-mail address. The buyer has to sign up and verify their e-mail first.',
  MASTER_NOT_FOUND: 'This master does not exist or is not yours.',
  LICENSE_NOT_FOUND: 'This license does not exist or is not yours.',
  FORBIDDEN: 'You are not allowed to do this.',
  LICENSE_REVOKED: 'The seller revoked this license. No copies or keys are issued for it any more.',
  RATE_LIMITED: 'Too many key releases recently.',
  PAYLOAD_TOO_LARGE: 'The file is larger than the service accepts.',
  UNSUPPORTED_MEDIA_TYPE: 'The service does not accept this type of file here.',
  SIGNER_NOT_SELLER: 'The master is not signed by a signing key registered to your account.',
  CRYPTO_UNAVAILABLE: 'The service\'s key module is not loaded, so this cannot be done right now.',
  INTERNAL: 'Something went wrong on the service.',
  DECRYPT_FAILED: 'The file could not be decrypted: it was not made for this service, or it was changed.',
  BAD_SIGNATURE: 'The file\'s signature does not match its contents: it was changed after signing.',
  KEY_REQUIRED: 'The file is not sealed to this service\'s key. Pack it with the service key shown on this page.',
  EMAIL_NOT_VERIFIED: 'Verify your e-mail address first: open the link in the message the service sent you, or ask for a new one.',
  SIGNING_KEY_REQUIRED: 'Register a signing key first (iki register-key), then sign the master with it.',
  SIGNING_KEY_REVOKED: 'Your account revoked this key, so it no longer signs for the account.',
  SIGNING_KEY_TAKEN: 'This key is registered to another account.',
  STORAGE_QUOTA_EXCEEDED: 'This master would take your stored masters past your storage quota.',
  MASTER_NAME_TOO_LONG: 'The model\'s name is longer than 256 bytes. Pack it again with a shorter name (--name).',
  MASTER_HAS_LICENSES: 'This master has licenses (revoked ones count too), so it is kept: its buyers\' copies and history need it.',
  MASTER_ARCHIVED: 'This master is archived, so it takes no new license. Restore it in its panel first.',
  IMAGE_TOO_LARGE: 'The image is larger than every texture of this master, so it cannot be one of them.',
};

/** A sentence for an error, without internals. */
export function plainWords(err: unknown): string {
  if (err instanceof ApiProblem) {
    const scope = err.details?.['scope'];
    if (err.code === 'RATE_LIMITED' && (scope === 'license' || scope === 'user')) {
      return `Too many key releases for this ${scope === 'user' ? 'account' : 'license'} recently.`;
    }
    if (err.code === 'SIGN_IN_THROTTLED') {
      return `Too many failed sign-ins for this address or from this network. Try again in ${retryMinutes(err)}.`;
    }
    if (err.code === 'COPY_RATE_LIMITED') {
      return `Too many downloads ${scope === 'user' ? 'for this account' : 'of this license'} recently. Try again in ${retryWait(err)}.`;
    }
    if (err.code === 'TOO_MANY_DOWNLOADS') {
      return `Other downloads ${scope === 'user' ? 'of yours' : 'of this license'} are still running. Try again when one has finished.`;
    }
    if (err.code === 'TOO_MANY_UPLOADS') return 'Other uploads of yours are still running. Try again when one has finished.';
    if (err.code === 'IDENTIFY_RATE_LIMITED') return `Too many identify requests recently. Try again in ${retryWait(err)}.`;
    if (err.code === 'MAIL_THROTTLED') {
      return `Too many verification e-mails were asked for, for this address or from this network. Try again in ${retryMinutes(err)}.`;
    }
    const words = WORDS[err.code];
    if (words !== undefined) return words;
    if (err.status === 422) return `The file failed the service's check (${err.message}).`;
    return sentence(err.message);
  }
  const code = typeof err === 'object' && err !== null ? (err as { code?: unknown }).code : undefined;
  if (typeof code === 'string' && WORDS[code] !== undefined) return WORDS[code];
  const message = typeof err === 'object' && err !== null ? (err as { message?: unknown }).message : undefined;
  return sentence(typeof message === 'string' ? message : String(err));
}

/** "1 minute", "15 minutes": the wait a 429 names, rounded up to whole minutes. */
function retryMinutes(err: ApiProblem): string {
  const minutes = Math.max(1, Math.ceil(Number(err.details?.['retryAfterSeconds'] ?? 60) / 60));
  return `${minutes} minute${minutes === 1 ? '' : 's'}`;
}

/** The wait a 429 names (Retry-After, else its details) in whole minutes, or whole hours from two hours on. */
function retryWait(err: ApiProblem): string {
  const seconds = Number(err.retryAfterSeconds ?? err.details?.['retryAfterSeconds'] ?? 60);
  const minutes = Math.max(1, Math.ceil(seconds / 60));
  if (minutes < 120) return `${minutes} minute${minutes === 1 ? '' : 's'}`;
  return `${Math.ceil(minutes / 60)} hours`;
}

/** `text` as a sentence: capitalised, with a full stop. */
export function sentence(text: string): string {
  const trimmed = String(text).trim();
  if (trimmed === '') return 'Something went wrong.';
  const first = trimmed.charAt(0).toUpperCase() + trimmed.slice(1);
  return /[.!?]$/.test(first) ? first : `${first}.`;
}
