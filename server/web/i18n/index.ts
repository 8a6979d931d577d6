/**
 * The pages' languages (issue 24 item 9): every string a person reads comes from one message
 * catalog per language (`en.ts`, `ja.ts`), formatted by FormatJS's `intl-messageformat` (ICU
 * MessageFormat: plurals, selects and placeholders are the library's, never string
 * concatenation). `ja.ts` is typed against `en.ts`'s keys, so a missing or stray key fails the
 * build.
 *
 * The language: the one the person chose with the header's switch (remembered in the
 * `iki_lang` cookie, which holds nothing else and no secret, so the service could read it too),
 * else the first of `navigator.languages` this site speaks, else English. Dates and numbers go
 * through `Intl` in that language. Static page text is marked in the HTML with `data-i18n`
 * (text), `data-i18n-aria-label` and `data-i18n-title` (attributes), and is replaced when this
 * module loads, before any page code runs; `<html lang>` is set, which also selects the CJK
 * line-breaking rules in style.css.
 */
import { formatBytes } from '@iki/core/browser';
import { IntlMessageFormat } from 'intl-messageformat';
import { en, type MessageKey } from './en.js';
import { ja } from './ja.js';

export type { MessageKey } from './en.js';

/** The languages the pages speak. */
export type Locale = 'en' | 'ja';

/** Each language's name in itself, for the switch. */
export const LOCALE_NAMES: Readonly<Record<Locale, string>> = { en: 'English', ja: '日本語' };

const CATALOGS: Readonly<Record<Locale, Readonly<Record<MessageKey, string>>>> = { en, ja };
const COOKIE = 'iki_lang';

/** Values of a message's placeholders. */
export type MessageValues = Record<string, string | number | Date>;

/** The language for a remembered choice and the browser's preferences (see the module comment). */
export function pickLocale(chosen: string | undefined, languages: readonly string[]): Locale {
  if (chosen === 'en' || chosen === 'ja') return chosen;
  for (const tag of languages) {
    const base = tag.toLowerCase().split('-')[0];
    if (base === 'ja' || base === 'en') return base;
  }
  return 'en';
}

function rememberedLocale(): string | undefined {
  if (typeof document === 'undefined') return undefined;
  return /(?:^|;\s*)iki_lang=([a-z]{2})(?:;|$)/.exec(document.cookie)?.[1];
}

/** The language of this page. */
export const locale: Locale = pickLocale(rememberedLocale(), typeof navigator === 'undefined' ? [] : navigator.languages);

const formats = new Map<MessageKey, IntlMessageFormat>();

/** The message `key` in this page's language, its placeholders filled by the library. */
export function t(key: MessageKey, values?: MessageValues): string {
  let format = formats.get(key);
  if (format === undefined) {
    format = new IntlMessageFormat(CATALOGS[locale][key], locale);
    formats.set(key, format);
  }
  return String(format.format(values));
}

/**
 * The message `key` with elements among its values (e.g. a `<code>` or a `<time>` inside a
 * sentence): the library places them, so each language orders the sentence its own way.
 */
export function tParts<T>(key: MessageKey, values: Record<string, string | number | Date | T>): (string | T)[] {
  const format = new IntlMessageFormat(CATALOGS[locale][key], locale);
  const parts = format.format<T>(values as Record<string, T>);
  return (Array.isArray(parts) ? parts : [parts]).map((part) => (typeof part === 'string' || typeof part === 'object' ? part : String(part))) as (string | T)[];
}

/** Whether `key` is a message of the catalogs (for codes from elsewhere, e.g. an error's). */
export function hasMessage(key: string): key is MessageKey {
  return Object.hasOwn(en, key);
}

/** Remembers `chosen` for this site and shows the page in it. */
export function chooseLocale(chosen: Locale): void {
  document.cookie = `${COOKIE}=${chosen}; Path=/; Max-Age=31536000; SameSite=Lax`;
  location.reload();
}

/** A date and time in this page's language (local time). */
export function formatDateTime(value: string | number | Date): string {
  const date = value instanceof Date ? value : new Date(value);
  if (Number.isNaN(date.getTime())) return String(value);
  return new Intl.DateTimeFormat(locale, { dateStyle: 'medium', timeStyle: 'short' }).format(date);
}

/** A size in bytes in this page's language: under 1 KiB as a counted word, else the library's KiB/MiB/GiB. */
export function formatSize(n: number): string {
  return n < 1024 ? t('common.byteCount', { n }) : formatBytes(n);
}

/** A number in this page's language. */
export function formatNumber(value: number): string {
  return new Intl.NumberFormat(locale).format(value);
}

/** Replaces the marked static text of `root` (see the module comment). */
export function translateStatic(root: ParentNode = document): void {
  for (const node of root.querySelectorAll<HTMLElement>('[data-i18n]')) {
    const key = node.dataset['i18n'] ?? '';
    if (hasMessage(key)) node.textContent = t(key);
  }
  for (const [attribute, data] of [['aria-label', 'i18nAriaLabel'], ['title', 'i18nTitle'], ['placeholder', 'i18nPlaceholder']] as const) {
    for (const node of root.querySelectorAll<HTMLElement>(`[data-${attribute === 'aria-label' ? 'i18n-aria-label' : `i18n-${attribute}`}]`)) {
      const key = node.dataset[data] ?? '';
      if (hasMessage(key)) node.setAttribute(attribute, t(key));
    }
  }
}

if (typeof document !== 'undefined') {
  document.documentElement.lang = locale;
  translateStatic();
}
