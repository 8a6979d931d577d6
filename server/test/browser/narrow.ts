/**
 * 360 px in every state (issue 24 item 7): at each state a browser test reaches, the page is
 * laid out at 360 px wide, measured, and put back to the test's own size. A page that scrolls
 * sideways fails the step that reached the state, naming the widest element past the edge.
 *
 * "Each state a test reaches" is each wait the test makes for the page to change: a locator's
 * `waitFor()`, `page.waitForSelector()`, `waitForURL()`, `waitForFunction()`,
 * `waitForLoadState()`, `goto()` and `reload()`. {@link watchNarrow} hooks those on a page;
 * {@link watchBrowser} applies it to every page of every context a browser makes, and
 * `chromium.ts`'s launch does that, so a new test gets the check without asking for it. A step can also measure explicitly with
 * {@link measureNarrow}.
 */
import type { Browser, Locator, Page } from 'playwright-core';

/** The narrowest screen the pages are made for. */
export const NARROW_WIDTH = 360;

/** What the page looks like past its edge at 360 px, or null when nothing is. */
interface Overflow { scrollWidth: number; clientWidth: number; widest: string }

declare const document: any;
declare const window: any;

/** Measures the laid-out page (run inside the page). */
function measureInPage(): Overflow | null {
  const root = document.documentElement;
  const clientWidth: number = root.clientWidth;
  if (root.scrollWidth <= clientWidth) return null;
  // An element inside a container that clips or scrolls sideways does not widen the page.
  const clipped = (node: any): boolean => {
    for (let up = node.parentElement; up !== null && up !== root && up !== document.body; up = up.parentElement) {
      const x = window.getComputedStyle(up).overflowX;
      if (x !== 'visible') return true;
    }
    return false;
  };
  const name = (node: any): string => {
    const id = node.id === '' ? '' : `#${node.id}`;
    const cls = typeof node.className === 'string' && node.className.trim() !== '' ? `.${node.className.trim().split(/\s+/).join('.')}` : '';
    return `${node.tagName.toLowerCase()}${id}${cls}`;
  };
  let widest: any = null;
  let right = clientWidth + 0.5;
  const consider = (node: any, box: any, named: any = node): void => {
    // Ties go to the later node in document order, the deeper one: the cause, not its parent.
    if (box.width === 0 || box.right + window.scrollX < right || clipped(node)) return;
    widest = named;
    right = box.right + window.scrollX;
  };
  for (const node of document.body.querySelectorAll('*')) consider(node, node.getBoundingClientRect());
  // Text that runs out of its element (a long id or hash that cannot break) is not in the
  // element's box: each text's own extent names the element it overflows from.
  const walker = document.createTreeWalker(document.body, 4);
  for (let text = walker.nextNode(); text !== null; text = walker.nextNode()) {
    const range = document.createRange();
    range.selectNodeContents(text);
    if (text.parentElement !== null) consider(text, range.getBoundingClientRect(), text.parentElement);
  }
  let where = 'no element past the edge (a margin or a pseudo-element)';
  if (widest !== null) {
    const chain: string[] = [];
    for (let up = widest; up !== null && up !== document.body && chain.length < 4; up = up.parentElement) chain.unshift(name(up));
    const text = String(widest.textContent ?? '').replace(/\s+/g, ' ').trim().slice(0, 60);
    where = `${chain.join(' > ')} (right edge ${Math.round(right)} px${text === '' ? '' : `, text "${text}"`})`;
  }
  return { scrollWidth: root.scrollWidth, clientWidth, widest: where };
}

const queues = new WeakMap<Page, Promise<unknown>>();

/**
 * Lays `page` out at 360 px, measures it and restores its size; throws when it scrolls
 * sideways, naming `step` and the widest element past the edge. A page that is closed or
 * navigating away in the meantime is not measured.
 */
export async function measureNarrow(page: Page, step: string): Promise<void> {
  const previous = queues.get(page) ?? Promise.resolve();
  const run = previous.catch(() => undefined).then(async () => {
    const started = Date.now();
    await measureOnce(page, step);
    if (process.env['IKI_NARROW_TRACE'] === '1') process.stdout.write(`narrow: ${Date.now() - started} ms after ${step}\n`);
  });
  queues.set(page, run.catch(() => undefined));
  return run;
}

/** Per page: the document and its change count at the last measurement. */
const measured = new WeakMap<Page, string>();

async function measureOnce(page: Page, step: string): Promise<void> {
  if (page.isClosed()) return;
  const size = page.viewportSize();
  if (size === null) return;
  // A state already measured (same document, nothing changed since) is not laid out again.
  let key: string;
  try {
    key = await page.evaluate(() => `${window.__ikiNarrowDocument ?? ''}:${window.__ikiNarrowChanges ?? -1}`);
  } catch (err) {
    if (page.isClosed() || /context was destroyed|navigat|Target closed|has been closed/i.test(String(err))) return;
    throw err;
  }
  if (!key.endsWith(':-1') && measured.get(page) === key) return;
  const narrow = size.width > NARROW_WIDTH;
  let overflow: Overflow | null;
  try {
    if (narrow) await page.setViewportSize({ width: NARROW_WIDTH, height: size.height });
    overflow = await page.evaluate(measureInPage);
  } catch (err) {
    if (page.isClosed() || /context was destroyed|navigat|Target closed|has been closed/i.test(String(err))) return;
    throw err;
  } finally {
    if (narrow && !page.isClosed()) await page.setViewportSize(size).catch(() => undefined);
  }
  if (overflow !== null) {
    throw new Error(`at ${NARROW_WIDTH} px, after ${step} on ${page.url()}: the page is ${overflow.scrollWidth} px wide ` +
      `(${overflow.clientWidth} px visible); widest: ${overflow.widest}`);
  }
  measured.set(page, key);
}

const watched = new WeakSet<Page>();
let locatorPatched = false;

/** Measures `page` at 360 px after each wait its test makes (see the module comment). */
export function watchNarrow(page: Page): void {
  if (watched.has(page)) return;
  watched.add(page);
  // Counts the document's changes, so a wait that changed nothing is not measured again.
  void page.addInitScript(() => {
    window.__ikiNarrowDocument = Math.random().toString(36).slice(2);
    window.__ikiNarrowChanges = 0;
    new window.MutationObserver(() => { window.__ikiNarrowChanges += 1; })
      .observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
  }).catch(() => undefined);
  for (const method of ['waitForSelector', 'waitForURL', 'waitForFunction', 'waitForLoadState', 'goto', 'reload'] as const) {
    const original = (page[method] as (...args: unknown[]) => Promise<unknown>).bind(page);
    (page as unknown as Record<string, unknown>)[method] = async (...args: unknown[]) => {
      const result = await original(...args);
      await measureNarrow(page, `${method}(${describe(args[0])})`);
      return result;
    };
  }
  if (!locatorPatched) {
    locatorPatched = true;
    const proto = Object.getPrototypeOf(page.locator('html')) as Locator;
    const waitFor = proto.waitFor;
    proto.waitFor = async function (this: Locator, ...args: Parameters<Locator['waitFor']>) {
      await waitFor.apply(this, args);
      const owner = this.page();
      if (watched.has(owner)) await measureNarrow(owner, `waitFor(${String(this)}${args[0]?.state === undefined ? '' : `, ${args[0].state}`})`);
    };
  }
}

function describe(arg: unknown): string {
  if (typeof arg === 'string') return arg;
  if (typeof arg === 'function') return 'function';
  return arg === undefined ? '' : String(arg);
}

/** Watches every page of every context `browser` makes from now on (see {@link watchNarrow}). */
export function watchBrowser(browser: Browser): Browser {
  const newContext = browser.newContext.bind(browser);
  browser.newContext = async (...args) => {
    const context = await newContext(...args);
    context.on('page', watchNarrow);
    return context;
  };
  return browser;
}

/**
 * The names of file paths (`.mono.path` under `selector`) split across lines although they fit
 * on one: a path may break after a `/` (or inside a name longer than its line), never inside a
 * name that fits. Each as `path: name`; empty when every path wraps as it should.
 */
export function namesSplit(page: Page, selector: string): Promise<string[]> {
  return page.evaluate((root: string) => {
    const out: string[] = [];
    for (const span of document.querySelectorAll(`${root} .mono.path`)) {
      const text: string = span.textContent ?? '';
      const box = span.parentElement.getBoundingClientRect();
      // Each text node is a name with its trailing slash (pathEl puts a <wbr> between them).
      for (const node of span.childNodes) {
        if (node.nodeType !== 3) continue;
        const name = String(node.data).replace(/\/$/, '');
        if (name === '') continue;
        const range = document.createRange();
        range.setStart(node, 0);
        range.setEnd(node, name.length);
        const rects = [...range.getClientRects()].filter((r: any) => r.width > 0);
        const lines = new Set(rects.map((r: any) => Math.round(r.top))).size;
        const width = rects.reduce((sum: number, r: any) => sum + r.width, 0);
        if (lines > 1 && width <= box.width) out.push(`${text}: ${name}`);
      }
    }
    return out;
  }, selector);
}
