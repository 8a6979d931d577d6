/** A deflate worker of the seller page's master export: deflates chunks the export worker sends it (`@iki/core/browser` deflate-pool.ts); it holds no key. */
import { deflateTasks, exposeTasks } from '@iki/core/browser/worker';

exposeTasks(deflateTasks);
