/**
 * Why a folder cannot be packed or a package cannot be laid out on disk. These codes are the
 * CLI's own (README "CLI"), next to the container's codes of docs/format.md section 11: they
 * describe the user's files, never the bytes of a container.
 */

/** Stable codes of {@link PackageError}. */
export type PackageErrorCode =
  /** A path that the manifest rules refuse: empty, `.` or `..` segment, `\`, control character, too long. */
  | 'BAD_PATH'
  /** A path (or a symbolic link) that leads outside the folder. */
  | 'PATH_ESCAPES'
  /** A file the model or project refers to does not exist. */
  | 'MISSING_FILE'
  /** Something other than a regular file where a file is needed. */
  | 'NOT_A_FILE'
  /** Something other than a folder where the folder to pack is needed. */
  | 'NOT_A_FOLDER'
  /** A model texture that is not a PNG file. */
  | 'NOT_PNG'
  /** The model folder or its model3.json is not usable. */
  | 'BAD_MODEL'
  /** The project folder or its snapshot is not usable, or a project package's asset names are inconsistent. */
  | 'BAD_PROJECT'
  /** More files than a manifest may hold, or an image too large to handle. */
  | 'TOO_LARGE';

/** A refused folder or package layout; `path` names the file at fault when there is one. */
export class PackageError extends Error {
  /** Stable code; messages may change, codes never do. */
  readonly code: PackageErrorCode;
  /** The path at fault (relative to the folder), when one is. */
  readonly path?: string;

  constructor(code: PackageErrorCode, message: string, path?: string) {
    super(message);
    this.name = 'PackageError';
    this.code = code;
    if (path !== undefined) this.path = path;
  }
}
