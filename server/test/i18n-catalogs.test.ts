/**
 * The pages' message catalogs (issue 24 item 9): Japanese has exactly English's keys, every
 * message parses as ICU MessageFormat in its language and uses the same placeholders as its
 * English one, and no Japanese message is English left untranslated.
 */
import { IntlMessageFormat } from 'intl-messageformat';
import { describe, expect, it } from 'vitest';
import { en } from '../web/i18n/en.js';
import { ja } from '../web/i18n/ja.js';

/** The argument names a message uses (walking plural and select options too). */
function argumentsOf(message: string, locale: string): string[] {
  const names = new Set<string>();
  const walk = (nodes: readonly unknown[]): void => {
    for (const node of nodes as { type: number; value?: string; options?: Record<string, { value: unknown[] }> }[]) {
      if (typeof node.value === 'string' && node.type !== 0) names.add(node.value);
      for (const option of Object.values(node.options ?? {})) walk(option.value);
    }
  };
  walk(new IntlMessageFormat(message, locale).getAst());
  return [...names].sort();
}

/** Messages that are the same in both languages on purpose (a placeholder alone, a brand name). */
const SAME = new Set(['common.bytes', 'shops.kindStripe', 'shops.kindGumroad']);

describe('message catalogs', () => {
  it('Japanese has exactly the English keys', () => {
    expect(Object.keys(ja).sort()).toEqual(Object.keys(en).sort());
  });

  it('every message parses, with the same placeholders in both languages', () => {
    for (const key of Object.keys(en) as (keyof typeof en)[]) {
      expect({ key, args: argumentsOf(ja[key], 'ja') }).toEqual({ key, args: argumentsOf(en[key], 'en') });
    }
  });

  it('no Japanese message is English left untranslated', () => {
    for (const key of Object.keys(en) as (keyof typeof en)[]) {
      if (SAME.has(key)) continue;
      expect({ key, same: ja[key] === en[key] }).toEqual({ key, same: false });
      // Japanese text: at least one kana or kanji outside the placeholders.
      const literal = ja[key].replace(/\{\w+\}/g, '');
      expect({ key, japanese: /[\u3040-\u30ff\u4e00-\u9fff]/.test(literal) || literal.trim() === '' }).toEqual({ key, japanese: true });
    }
  });

  it('plurals and placeholders are formatted by the library', () => {
    expect(new IntlMessageFormat(en['wait.minutes'], 'en').format({ n: 1 })).toBe('1 minute');
    expect(new IntlMessageFormat(en['wait.minutes'], 'en').format({ n: 5 })).toBe('5 minutes');
    expect(new IntlMessageFormat(ja['wait.minutes'], 'ja').format({ n: 5 })).toBe('5 分');
    expect(new IntlMessageFormat(en['error.RATE_LIMITED'], 'en').format({ scope: 'user' })).toBe('Too many key releases for this account recently.');
  });
});
