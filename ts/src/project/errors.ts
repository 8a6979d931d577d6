/**
 * Why a project cannot be saved or opened, beyond the container's own codes (docs/format.md
 * section 11, which reach the caller as `IkiError`). These describe the user's project, the
 * key that opens it and legacy `.rigproj` bundles (docs/format.md section 13); README
 * "Project files" lists them.
 */
import type { Verdict } from './verdict.js';

/** Stable codes of {@link ProjectError}. */
export type ProjectErrorCode =
  /** Neither a project file (`.iki`) nor a `.rigproj` bundle (details: `found`). */
  | 'NOT_A_PROJECT'
  /** The snapshot is not a JSON object, or is larger than its limit (details: `reason`, `max`). */
  | 'BAD_SNAPSHOT'
  /** An asset name or media type the project cannot hold (details: `name`, `reason`). */
  | 'BAD_ASSET'
  /** A password the strength estimator finds easy to guess, refused before saving (details: `score`, `guessesLog10`). */
  | 'WEAK_PASSWORD'
  /** The file has a password slot and no password was given. */
  | 'PASSWORD_REQUIRED'
  /** The password does not open the file; another may be tried. */
  | 'WRONG_PASSWORD'
  /** The file opens only for an account, and no one is signed in (details: `accountId`). */
  | 'SIGN_IN_REQUIRED'
  /** The file opens only for another account than the one signed in (details: `accountId`). */
  | 'WRONG_ACCOUNT'
  /** The file is encrypted with no slot this app can open (details: `slots`). */
  | 'NO_USABLE_SLOT'
  /** The content of a file modified after it was signed, asked for before `acknowledge()`. */
  | 'NOT_ACKNOWLEDGED'
  /** An asset that was damaged in the file (details: `name`). */
  | 'ASSET_DAMAGED'
  /** A `.rigproj` bundle beyond a limit (details: `limit`, `value`, `max`, `name`). */
  | 'RIGPROJ_LIMIT'
  /** A `.rigproj` entry name that is absolute, escapes with `..`, repeats or is unsafe (details: `name`, `reason`). */
  | 'RIGPROJ_BAD_NAME'
  /** A `.rigproj` entry that is encrypted (details: `name`). */
  | 'RIGPROJ_ENCRYPTED'
  /** A `.rigproj` entry compressed with a method other than stored or deflate (details: `name`, `method`). */
  | 'RIGPROJ_UNSUPPORTED'
  /** A `.rigproj` bundle that is not a sound ZIP file (details: `reason`). */
  | 'RIGPROJ_DAMAGED';

/** Non-secret context of a {@link ProjectError}. */
export type ProjectErrorDetails = Record<string, string | number>;

/** A refused project operation. */
export class ProjectError extends Error {
  /** Stable code; messages may change, codes never do. */
  readonly code: ProjectErrorCode;
  readonly details?: ProjectErrorDetails;
  /**
   * For a refused key (`PASSWORD_REQUIRED`, `WRONG_PASSWORD`, `SIGN_IN_REQUIRED`,
   * `WRONG_ACCOUNT`): who signed the file, decided without the key (SPEC "What the service
   * does" 7: opening first shows who signed the file; the signer is readable without the key).
   */
  verdict?: Verdict;

  constructor(code: ProjectErrorCode, message: string, details?: ProjectErrorDetails) {
    super(message);
    this.name = 'ProjectError';
    this.code = code;
    if (details !== undefined) this.details = details;
  }
}

/** The refusals of a key, after which the file is still read for its signer. */
export const KEY_REFUSALS: ReadonlySet<ProjectErrorCode> = new Set(['PASSWORD_REQUIRED', 'WRONG_PASSWORD', 'SIGN_IN_REQUIRED', 'WRONG_ACCOUNT']);
