/** The seller page's master export worker: checks, packs, signs and uploads a model folder with its own WASM instance (`@iki/core/browser` master-export.ts). */
import { exportTasks, exposeTasks } from '@iki/core/browser/worker';

exposeTasks(exportTasks);
