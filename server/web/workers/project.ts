/** The project page's worker: saves and opens project files with its own WASM instance (`@iki/core/browser` project-tasks.ts). */
import { exposeTasks, projectTasks } from '@iki/core/browser/worker';

exposeTasks(projectTasks);
