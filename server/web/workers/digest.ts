/** The project page's digest worker: hashes a project file's bytes for its signature while the project worker writes them (`@iki/core/browser` digest-worker.ts); it holds no key. */
import { digestTasks, exposeTasks } from '@iki/core/browser/worker';

exposeTasks(digestTasks);
