/**
 * The files a Cubism `*.model3.json` refers to (`FileReferences`: Moc, Textures, Physics,
 * Pose, DisplayInfo, UserData, Expressions[].File, Motions[group][].File and .Sound), as
 * package paths. SPEC "What the service does" 2: a protected model holds exactly the runtime
 * package the player resolves, so every reference must resolve inside the folder.
 */
import { PackageError } from './errors.js';
import { normalizeReference } from './reference.js';

/** The package paths a model3.json refers to, each once, in the order they appear. */
export interface ModelReferences {
  /** PNG textures (stored as `rgba8`). */
  textures: string[];
  /** Every other referenced file (stored as `deflate`). */
  files: string[];
}

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

function bad(message: string): never {
  throw new PackageError('BAD_MODEL', message);
}

function optionalString(refs: Json, key: string, out: string[]): void {
  const value = refs[key];
  if (value === undefined || value === null) return;
  if (typeof value !== 'string') bad(`FileReferences.${key} must be a string`);
  out.push(value);
}

function fileList(value: unknown, where: string, out: string[], sound: boolean): void {
  if (value === undefined || value === null) return;
  if (!Array.isArray(value)) bad(`${where} must be an array`);
  value.forEach((item: unknown, i) => {
    if (!isObject(item) || typeof item.File !== 'string') bad(`${where}[${i}].File must be a string`);
    out.push(item.File);
    if (sound && item.Sound !== undefined && item.Sound !== null) {
      if (typeof item.Sound !== 'string') bad(`${where}[${i}].Sound must be a string`);
      out.push(item.Sound);
    }
  });
}

/**
 * Parses a model3.json's text and lists its references. `BAD_MODEL` when it is not JSON, has
 * no `FileReferences` object or no `Moc`, a field has the wrong type, or one file is used both
 * as a texture and as something else; `BAD_PATH` / `PATH_ESCAPES` for a bad reference.
 */
export function modelReferences(text: string): ModelReferences {
  let model: unknown;
  try {
    model = JSON.parse(text);
  } catch {
    bad('the model3.json is not valid JSON');
  }
  if (!isObject(model) || !isObject(model.FileReferences)) bad('the model3.json has no FileReferences object');
  const refs = model.FileReferences;
  if (typeof refs.Moc !== 'string') bad('FileReferences.Moc must be a string');
  const files: string[] = [refs.Moc];
  const textures: string[] = [];
  if (refs.Textures !== undefined && refs.Textures !== null) {
    if (!Array.isArray(refs.Textures) || !refs.Textures.every((t) => typeof t === 'string')) {
      bad('FileReferences.Textures must be an array of strings');
    }
    textures.push(...(refs.Textures as string[]));
  }
  for (const key of ['Physics', 'Pose', 'DisplayInfo', 'UserData']) optionalString(refs, key, files);
  fileList(refs.Expressions, 'FileReferences.Expressions', files, false);
  if (refs.Motions !== undefined && refs.Motions !== null) {
    if (!isObject(refs.Motions)) bad('FileReferences.Motions must be an object of motion groups');
    for (const [group, motions] of Object.entries(refs.Motions)) fileList(motions, `FileReferences.Motions.${group}`, files, true);
  }
  const unique = (list: string[]) => [...new Set(list.map(normalizeReference))];
  const result = { textures: unique(textures), files: unique(files) };
  const both = result.textures.find((t) => result.files.includes(t));
  if (both !== undefined) bad(`${both} is used both as a texture and as another file`);
  return result;
}
