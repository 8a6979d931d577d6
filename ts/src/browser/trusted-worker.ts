/**
 * Starting a module worker on a page that enforces Trusted Types
 * (`require-trusted-types-for 'script'`): `new Worker(url)` is a script-URL sink, so the URL
 * must come from a policy. {@link startModuleWorker} uses one policy, `iki-worker-url`, that
 * passes only same-origin `http(s)` URLs of `.js` files (a page names it in its CSP:
 * `trusted-types iki-worker-url`); the CSP's `worker-src` still decides what may load. Where
 * the browser has no Trusted Types, the URL is used as it is.
 */

/** The policy name a page's CSP must allow. */
export const WORKER_URL_POLICY = 'iki-worker-url';

interface TrustedScriptUrlPolicy { createScriptURL(input: string): unknown }
interface TrustedTypesFactory {
  createPolicy(name: string, rules: { createScriptURL(input: string): string }): TrustedScriptUrlPolicy;
}

let policy: TrustedScriptUrlPolicy | undefined;

/** `url` resolved against the page and checked: same origin, http(s), a `.js` file. */
export function checkWorkerUrl(url: string): string {
  const resolved = new URL(url, globalThis.location.href);
  if (resolved.origin !== globalThis.location.origin || !/^https?:$/.test(resolved.protocol)
    || !resolved.pathname.endsWith('.js')) {
    throw new TypeError(`a worker script must be a .js file of this origin, not ${resolved.href}`);
  }
  return resolved.href;
}

/** Starts the module worker at `url` (checked by {@link checkWorkerUrl}). */
export function startModuleWorker(url: string | URL, name?: string): Worker {
  // A TrustedScriptURL is what the Worker constructor accepts here; TypeScript's DOM types predate it.
  return new Worker(trustedScriptUrl(url) as string, { type: 'module', ...(name === undefined ? {} : { name }) });
}

/**
 * `url` (checked by {@link checkWorkerUrl}) as a script URL the page's Trusted Types accept,
 * for `navigator.serviceWorker.register`, a sink like `new Worker`.
 */
export function trustedScriptUrl(url: string | URL): unknown {
  const href = checkWorkerUrl(String(url));
  const factory = (globalThis as { trustedTypes?: TrustedTypesFactory }).trustedTypes;
  if (factory === undefined) return href;
  policy ??= factory.createPolicy(WORKER_URL_POLICY, { createScriptURL: checkWorkerUrl });
  return policy.createScriptURL(href);
}
