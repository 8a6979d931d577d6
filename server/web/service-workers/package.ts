/** The package URLs' service worker (`@iki/core/browser/service-worker` package-sw.ts). */
import { servePackageUrls, type PackageWorkerScope } from '@iki/core/browser/service-worker';

servePackageUrls(self as unknown as PackageWorkerScope);
