/**
 * Errors in the page's language: the service's codes (`ApiProblem`) and the library's
 * (`IkiError`, `ProjectError`, worker errors carrying a `code`) map to `error.<CODE>` messages
 * of the catalogs, with their waits and scopes as ICU placeholders. A code the catalogs do not
 * know falls back to the library's English sentence in English, and to a generic sentence in
 * another language (the code itself is shown in the details line beside it).
 */
import { ApiProblem, plainWords } from '@iki/core/browser';
import { hasMessage, locale, t, type MessageKey } from './index.js';

/** The wait a 429 names (Retry-After, else its details): whole minutes, or whole hours from two hours on. */
export function waitWords(err: ApiProblem): string {
  const seconds = Number(err.retryAfterSeconds ?? err.details?.['retryAfterSeconds'] ?? 60);
  const minutes = Math.max(1, Math.ceil(seconds / 60));
  return minutes < 120 ? t('wait.minutes', { n: minutes }) : t('wait.hours', { n: Math.ceil(minutes / 60) });
}

/** A sentence for `err` in the page's language, without internals. */
export function errorWords(err: unknown): string {
  const code = typeof err === 'object' && err !== null ? (err as { code?: unknown }).code : undefined;
  const key = `error.${String(code)}`;
  if (typeof code === 'string' && hasMessage(key)) {
    const details = (err as { details?: Record<string, unknown> }).details ?? {};
    const scope = typeof details['scope'] === 'string' ? details['scope'] : 'other';
    const minutes = Math.max(1, Math.ceil(Number(details['retryAfterSeconds'] ?? 60) / 60));
    const wait = err instanceof ApiProblem ? waitWords(err) : t('wait.minutes', { n: minutes });
    return t(key as MessageKey, { scope, minutes, wait, score: Number(details['score'] ?? 0), guesses: Number(details['guessesLog10'] ?? 0) });
  }
  if (err instanceof ApiProblem && err.status === 422) return t('error.checkFailed');
  return locale === 'en' ? plainWords(err) : t('error.unknown');
}
