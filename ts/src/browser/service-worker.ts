/**
 * `@iki/core/browser/service-worker`: what the package URLs' service worker entry imports
 * (issue 25 item 1). An entry is:
 *
 *     import { servePackageUrls } from '@iki/core/browser/service-worker';
 *     servePackageUrls(self);
 *
 * and a page registers it with `PackageUrls.register` of `@iki/core/browser`.
 */
export { servePackageUrls, PAGE_ANSWER_TIMEOUT_MS, type PackageAnswer, type PackageRequest, type PackageWorkerScope } from './package-sw.js';
export { encodePngStored, storedPngSize, MAX_PNG_BYTES } from './png-stored.js';
