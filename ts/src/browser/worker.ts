/**
 * `@iki/core/browser/worker`: what a Web Worker's entry imports. {@link exposeTasks} serves
 * tasks to the page, with this worker's own WASM instance; {@link licenseTasks} are the
 * player's, {@link exportTasks} the seller's master export (`packModelFolder` is its packing
 * step alone). A worker entry is:
 *
 *     import { exposeTasks, licenseTasks } from '@iki/core/browser/worker';
 *     exposeTasks(licenseTasks);
 */
export { exposeTasks } from './worker-host.js';
export { licenseTasks, openLicenseCopyTask, type LicenseTasks, type OpenLicenseArgs, type OpenLicenseProgress } from './license-copy.js';
export { PackageAssembler, DamagedCopy, type OpenedPackage } from './package-assembler.js';
export { projectTasks, type ProjectTasks } from './project-tasks.js';
export { exportTasks, packModelFolder, UploadProblem, type ExportTasks, type PackFolderOptions } from './master-export.js';
export { deflateTasks, WorkerDeflatePool, type DeflateTasks, type DeflateWorkersOption } from './deflate-pool.js';
export { digestTasks, WorkerDigests, type DigestTasks, type DigestWorkerOption } from './digest-worker.js';
export { DeviceKey, lastKnownIssuer, rememberIssuer, webCryptoHasEd25519, type DeviceKeyInfo } from './device-key.js';
export type { Task, TaskContext, TaskMap } from './worker-rpc.js';
