/**
 * Project files, the app side (SPEC "What the service does" 7, "Authentication", "Errors";
 * docs/format.md sections 5.1, 6.1, 7.3 and 13): {@link saveProject} writes a signed,
 * optionally protected project file, {@link openProject} opens a project file or a legacy
 * `.rigproj` bundle with the signer's verdict first. The same in browsers and Node; in a
 * browser, run both in a Web Worker (Argon2id and the streaming work stay off the page's
 * thread).
 */
import { ProjectError } from './errors.js';
import { asBlob, openIki, projectFileKind, type OpenProjectOptions } from './open.js';
import type { OpenedProject } from './opened.js';
import { openRigproj, type RigprojLimits } from './rigproj.js';

export { ProjectError, type ProjectErrorCode, type ProjectErrorDetails } from './errors.js';
export { assetSource, hashAsset, ONE_SHOT_HASH_BYTES, type AssetSource, type ProjectAsset } from './assets.js';
export { AssetDigests, MAX_REMEMBERED_DIGESTS, assetDigests, hashBlob, type Digest, type DigestOrigin } from './digests.js';
export { OpenedProject, MAX_READ_ASSET_BYTES, type AssetInfo, type OpenedMeta } from './opened.js';
export { asBlob, projectFileKind, type OpenProjectOptions, type ProjectFileKind } from './open.js';
export { openRigproj, RIGPROJ_LIMITS, type RigprojLimits } from './rigproj.js';
export { prepareAccountSlot, saveProject, type ProjectProgress, type ProjectProtection, type SaveProjectOptions, type SavedProject } from './save.js';
export { MAX_SNAPSHOT_BYTES, SNAPSHOT_PATH, SNAPSHOT_TYPE, parseSnapshot } from './snapshot.js';
export { decideVerdict, verdictText, type IssuerSource, type SignatureFinding, type Verdict, type VerdictContext, type VerdictResult } from './verdict.js';

/**
 * Opens a project file (`.iki`) or a legacy `.rigproj` bundle from a `Blob` (a `File`, or
 * `fs.openAsBlob(path)` in Node) or bytes. Refusals are `ProjectError`s (`PASSWORD_REQUIRED`,
 * `WRONG_PASSWORD`, `SIGN_IN_REQUIRED`, `WRONG_ACCOUNT` naming the account, `RIGPROJ_*`, ...)
 * or the container's `IkiError`s for a file that cannot be read at all.
 */
export async function openProject(source: Blob | Uint8Array,
  options: OpenProjectOptions & { rigprojLimits?: Partial<RigprojLimits>; fileName?: string } = {}): Promise<OpenedProject> {
  const blob = asBlob(source);
  const kind = await projectFileKind(blob);
  if (kind === 'rigproj') {
    return openRigproj(blob, { ...(options.rigprojLimits === undefined ? {} : { limits: options.rigprojLimits }),
      ...(options.fileName === undefined ? {} : { fileName: options.fileName }) });
  }
  return openIki(blob, options);
}

/** Keeps `ProjectError` reachable for `instanceof` in callers that import only this module. */
export const isProjectError = (error: unknown): error is ProjectError => error instanceof ProjectError;
