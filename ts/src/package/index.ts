/**
 * Folders on disk and the entries of a container (Node only: it reads and checks files).
 * `readModelFolder` and `readProjectFolder` produce what `writeContainer` takes;
 * `unpackLayout` says where each entry of a package goes when it is written back.
 */
export { type FolderPackage, type PackageEntry, type TextureMeta } from './entry.js';
export { PackageError, type PackageErrorCode } from './errors.js';
export { unpackLayout, type ManifestLike } from './layout.js';
export { encodingFor, mediaTypeOf } from './media.js';
export { readModelFolder, RGBA8_TYPE, type ModelFolderOptions } from './model.js';
export { modelReferences, type ModelReferences } from './model3.js';
export { checkEntryPath, isInside, joinInside, normalizeReference } from './paths.js';
export { isPng, pngSize, textureTooLarge } from './png.js';
export { ASSETS_DIR, readProjectFolder, SNAPSHOT_PATH, SNAPSHOT_TYPE, type ProjectFolderOptions } from './project.js';
export { bytesSource, fileSource, hashSource, sha256Hex, type EntrySource } from './sources.js';
