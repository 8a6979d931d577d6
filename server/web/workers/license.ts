/** The player's worker: opens license copies with its own WASM instance (`@iki/core/browser` license-copy.ts). */
import { exposeTasks, licenseTasks } from '@iki/core/browser/worker';

exposeTasks(licenseTasks);
