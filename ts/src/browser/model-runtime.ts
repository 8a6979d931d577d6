/**
 * A small model runtime that loads a Cubism-style package through a {@link PackageResolver}
 * only, as a runtime loads an unprotected model from a web server (issue 12 item 3): it
 * fetches the model JSON from `resolver.modelUrl` with `resolver.fetch`, resolves every
 * `FileReferences` entry relative to it like a URL, fetches each file, turns textures into
 * `ImageBitmap`s and sounds into `AudioBuffer`s, and reads the parameters of every motion and
 * expression. It deforms no mesh (that needs Cubism Core, which the user supplies; README
 * "Player"), but it proves that everything such a runtime asks for resolves.
 */
import type { PackageResolver } from './package-resolver.js';

/** What a reference is for, by the `FileReferences` key that names it. */
export type ReferenceRole = 'model' | 'moc' | 'texture' | 'physics' | 'pose' | 'displayInfo' | 'userData'
  | 'expression' | 'motion' | 'sound';

/** One reference of the model JSON and how it resolved. */
export interface ResolvedReference {
  role: ReferenceRole;
  /** As written in the model JSON. */
  reference: string;
  /** The URL it resolved to. */
  url: string;
  /** HTTP-like status of the resolver's answer (200, or 404 when it is not in the package). */
  status: number;
  /** The answer's media type and size (0 when not found). */
  type: string;
  bytes: number;
  /** Why it failed to load (decode error, bad JSON), when it did. */
  error?: string;
}

/** A motion's curves: which parameters, parts or model values it animates. */
export interface MotionInfo {
  group: string;
  index: number;
  reference: string;
  duration: number | null;
  fps: number | null;
  loop: boolean | null;
  curves: { target: string; id: string; points: number }[];
  sound: string | null;
}

/** An expression's parameter changes. */
export interface ExpressionInfo {
  name: string;
  reference: string;
  parameters: { id: string; value: number; blend: string }[];
}

/** A loaded texture (the caller closes the bitmaps with {@link LoadedModel.close}). */
export interface LoadedTexture { reference: string; index: number; bitmap: ImageBitmap }

/** A decoded sound. */
export interface LoadedSound { reference: string; buffer: AudioBuffer }

/** Everything {@link loadModel} resolved. */
export interface LoadedModel {
  modelUrl: string;
  version: number | null;
  references: ResolvedReference[];
  textures: LoadedTexture[];
  sounds: LoadedSound[];
  motions: MotionInfo[];
  expressions: ExpressionInfo[];
  /** Parameter and part ids named by the physics, pose and display info files. */
  physicsSettings: number;
  poseGroups: number;
  displayParameters: { id: string; name: string }[];
  close(): void;
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/** Options of {@link loadModel}. */
export interface LoadModelOptions {
  /** Decodes the sounds; without it sounds are only fetched. */
  audio?: BaseAudioContext;
  signal?: AbortSignal;
}

/** Loads the package's model through `resolver` (see the module comment). */
export async function loadModel(resolver: PackageResolver, options: LoadModelOptions = {}): Promise<LoadedModel> {
  const references: ResolvedReference[] = [];
  const textures: LoadedTexture[] = [];
  const sounds: LoadedSound[] = [];
  const fetchOne = async (role: ReferenceRole, reference: string): Promise<Response | null> => {
    options.signal?.throwIfAborted();
    const url = new URL(reference, resolver.modelUrl).href;
    const response = await resolver.fetch(url, options.signal === undefined ? {} : { signal: options.signal });
    const record: ResolvedReference = { role, reference, url, status: response.status,
      type: response.headers.get('content-type') ?? '', bytes: Number(response.headers.get('content-length') ?? 0) };
    if (!response.ok) record.error = (await response.text()).trim();
    references.push(record);
    return response.ok ? response : null;
  };
  const failed = (reference: string, err: unknown) => {
    const record = references.findLast((r) => r.reference === reference);
    if (record !== undefined) record.error = err instanceof Error ? err.message : String(err);
  };
  const jsonOf = async (role: ReferenceRole, reference: string): Promise<Json | null> => {
    const response = await fetchOne(role, reference);
    if (response === null) return null;
    try {
      const value: unknown = JSON.parse(await response.text());
      return isObject(value) ? value : null;
    } catch (err) {
      failed(reference, err);
      return null;
    }
  };

  const model = await jsonOf('model', resolver.modelUrl);
  const refs = isObject(model?.['FileReferences']) ? model['FileReferences'] : {};
  const moc = str(refs['Moc']);
  if (moc !== null) await fetchOne('moc', moc);
  for (const [index, reference] of list(refs['Textures']).entries()) {
    if (typeof reference !== 'string') continue;
    if ((await fetchOne('texture', reference)) === null) continue;
    try {
      textures.push({ reference, index, bitmap: await resolver.image(reference) });
    } catch (err) {
      failed(reference, err);
    }
  }
  const physics = str(refs['Physics']) === null ? null : await jsonOf('physics', str(refs['Physics']) as string);
  const pose = str(refs['Pose']) === null ? null : await jsonOf('pose', str(refs['Pose']) as string);
  const display = str(refs['DisplayInfo']) === null ? null : await jsonOf('displayInfo', str(refs['DisplayInfo']) as string);
  const userData = str(refs['UserData']);
  if (userData !== null) await jsonOf('userData', userData);

  const expressions: ExpressionInfo[] = [];
  for (const item of list(refs['Expressions'])) {
    const reference = isObject(item) ? str(item['File']) : null;
    if (reference === null) continue;
    const exp = await jsonOf('expression', reference);
    expressions.push({ name: str(isObject(item) ? item['Name'] : null) ?? reference, reference,
      parameters: list(exp?.['Parameters']).filter(isObject).map((p) => ({
        id: str(p['Id']) ?? '?', value: num(p['Value']) ?? 0, blend: str(p['Blend']) ?? 'Add' })) });
  }

  const motions: MotionInfo[] = [];
  const groups = isObject(refs['Motions']) ? refs['Motions'] : {};
  for (const [group, items] of Object.entries(groups)) {
    for (const [index, item] of list(items).entries()) {
      const reference = isObject(item) ? str(item['File']) : null;
      if (reference === null) continue;
      const motion = await jsonOf('motion', reference);
      const meta = isObject(motion?.['Meta']) ? motion['Meta'] : {};
      const sound = isObject(item) ? str(item['Sound']) : null;
      motions.push({ group, index, reference, sound, duration: num(meta['Duration']), fps: num(meta['Fps']),
        loop: typeof meta['Loop'] === 'boolean' ? meta['Loop'] : null,
        curves: list(motion?.['Curves']).filter(isObject).map((c) => ({ target: str(c['Target']) ?? '?', id: str(c['Id']) ?? '?',
          points: list(c['Segments']).length })) });
      if (sound === null) continue;
      if ((await fetchOne('sound', sound)) === null || options.audio === undefined) continue;
      try {
        sounds.push({ reference: sound, buffer: await resolver.audio(options.audio, sound) });
      } catch (err) {
        failed(sound, err);
      }
    }
  }

  return {
    modelUrl: resolver.modelUrl, version: num(model?.['Version']), references, textures, sounds, motions, expressions,
    physicsSettings: list(physics?.['PhysicsSettings']).length,
    poseGroups: list(pose?.['Groups']).length,
    displayParameters: list(display?.['Parameters']).filter(isObject).map((p) => ({ id: str(p['Id']) ?? '?', name: str(p['Name']) ?? '' })),
    close() {
      for (const t of textures) t.bitmap.close();
      textures.length = 0;
      sounds.length = 0;
    },
  };
}
