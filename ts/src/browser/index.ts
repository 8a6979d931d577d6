/**
 * `@iki/core/browser`: what a page or an editor app imports on the main thread. Nothing here
 * loads WebAssembly or touches the page's DOM: the API client and session, error wording,
 * formatting, the player (which works in a Web Worker), and the page side of the worker RPC.
 * The worker side is `@iki/core/browser/worker`.
 */
export * from './api.js';
export type * from './api-types.js';
export {
  currentSession, onSessionChange, refreshSession, saveSession, sessionApi, sessionToken, signIn, signOut, signOutEverywhere,
  signUp, verifyEmail, type Session,
} from './session.js';
export { plainWords, sentence } from './words.js';
export { formatBytes, formatTime } from './format.js';
export {
  DamagedCopy, MAX_DECODED_BYTES, packageBuffers, wipePackage, type OpenedPackage, type PackageFile,
} from './package-assembler.js';
export { WorkerClient, type RunOptions, type WorkerClientOptions } from './worker-client.js';
export { WORKER_URL_POLICY, checkWorkerUrl, startModuleWorker, trustedScriptUrl } from './trusted-worker.js';
export { PackageUrls, type PackageUrlsOptions, type ServeOptions, type ServedPackage } from './package-urls.js';
export {
  abortError, type Task, type TaskArgs, type TaskContext, type TaskMap, type TaskProgress, type TaskResult,
} from './worker-rpc.js';
export { LicensePlayer, type LicensePlayerOptions } from './license-player.js';
export { DEVICE_HEADER, PLAYER_DEVICE_STORAGE_KEY, licenseDeviceId, type DeviceIdStorage } from './device-id.js';
export {
  NotInPackage, PACKAGE_ORIGIN, PackageResolver, RGBA8_MEDIA_TYPE, type PackageResolverOptions,
} from './package-resolver.js';
export {
  loadModel, type ExpressionInfo, type LoadedModel, type LoadedSound, type LoadedTexture, type LoadModelOptions,
  type MotionInfo, type ReferenceRole, type ResolvedReference,
} from './model-runtime.js';
export type { LicenseTasks, OpenLicenseArgs, OpenLicenseProgress } from './license-copy.js';
export type {
  KeyInfo, LockedResult, OpenArgs, OpenResult, Preview, ProjectTaskProgress, ProjectTasks, SaveArgs, SaveResult, SessionArgs,
} from './project-tasks.js';
export type { DeviceKeyInfo } from './device-key.js';
export type { DigestWorkerOption } from './digest-worker.js';
export type {
  ExportArgs, ExportPreview, ExportProblem, ExportProgress, ExportResult, ExportTasks, FolderFile, PlannedFile,
} from './master-export.js';
export type { AssetInfo, OpenedMeta, Verdict } from '../project/index.js';
