/**
 * English left on a page shown in Japanese (issue 24 item 9): a sentence of the English catalog
 * (two words or more outside placeholders) anywhere in the page's text, or a label, heading,
 * button, notice or caption with no Japanese character. Data is not page text and is skipped:
 * `pre`, `code`, `.mono`, `.fingerprint`, `time`, and the values `data` names (a model's
 * name, file names, e-mail addresses).
 */
import type { Page } from 'playwright-core';
import { en } from '../../web/i18n/en.js';

const SENTENCES = Object.values(en).flatMap((m) => m.split(/\{[^{}]*\}/)).map((f) => f.trim())
  .filter((f) => /[A-Za-z]{2,} [A-Za-z]{2,}/.test(f));

/** What of the English catalog is left on `page` (both lists empty when nothing is). */
export function englishLeft(page: Page, data: readonly string[] = []): Promise<{ sentences: string[]; labels: string[] }> {
  return page.evaluate(({ fragments, known }) => {
    const doc = (globalThis as any).document;
    const body = doc.body.cloneNode(true);
    for (const node of body.querySelectorAll('pre, code, .mono, .fingerprint, time')) node.remove();
    const text: string = body.innerText;
    const sentences = fragments.filter((f: string) => text.includes(f));
    const labels = [...doc.querySelectorAll('h1, h2, h3, th, button, label, legend, caption, dt, .notice p, .badge, nav a, #session a, title')]
      .map((n: any) => String(n.textContent).trim())
      .filter((s: string) => s !== '' && s !== 'iki' && !/[\u3040-\u30ff\u4e00-\u9fff]/.test(s) && !s.includes('@') && !/\.(json|png|txt|iki)$/.test(s)
        && !known.includes(s));
    return { sentences, labels };
  }, { fragments: SENTENCES, known: [...data] });
}
