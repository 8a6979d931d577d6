/**
 * Project files in a browser, as worker tasks (SPEC "What the service does" 7): saving signed
 * by the browser's key (registered with the account when signed in), opening with the verdict
 * first, assets one at a time and image previews drawn from decoded pixels. Runs inside a Web
 * Worker with its own WASM instance (`worker-host.ts`), so Argon2id, hashing and the container
 * work never block the page; the opened project (and an encrypted file's content key, in WASM)
 * stays in the worker until the page closes it.
 *
 * Nothing here turns bytes into a URL or runs them: previews are decoded pixels (PNG, JPEG or
 * WebP only, by the WASM decoder, never an SVG or HTML), the snapshot is parsed JSON.
 */
import { decodeImage } from '../image.js';
import { fetchRequest, keyServiceClient, type KeyServiceApi } from '../key-service.js';
import {
  ProjectError, assetDigests, openProject, saveProject, type AssetInfo, type OpenedMeta, type OpenedProject, type ProjectAsset, type SavedProject, type Verdict,
} from '../project/index.js';
import { CHOOSE_ANOTHER, MIN_SCORE, describeWeakness, passwordStrength } from '../password-strength.js';
import type { CertificateFields } from '../signer.js';
import type { FileDigester } from '../file-digest.js';
import { WorkerDigests, type DigestWorkerOption } from './digest-worker.js';
import { DeviceKey, lastKnownIssuer, rememberIssuer, type DeviceKeyInfo } from './device-key.js';
import type { TaskContext } from './worker-rpc.js';

/** Who is signed in, handed over by the page (a worker has no session of its own). */
export interface SessionArgs {
  accessToken?: string;
  accountId?: string;
  email?: string;
  /** The service's origin; the worker's own when omitted. */
  baseUrl?: string;
}

/** Progress of saving and opening. */
export interface ProjectTaskProgress { phase: string; done: number; total: number }

/** What the page asks to save. */
export interface SaveArgs extends SessionArgs {
  snapshot: Record<string, unknown>;
  assets: { name: string; data: Blob; type?: string }[];
  name: string;
  canvas: { width: number; height: number };
  app: string;
  password?: string;
  /** An account slot for the signed-in account. */
  forAccount?: boolean;
  /** A file the user picked (File System Access API); without it the result carries a Blob. */
  output?: FileSystemFileHandle;
  /**
   * A digest worker to hash the file for its signature while this worker writes it
   * (digest-worker.ts); without it this worker hashes the file itself.
   */
  digest?: DigestWorkerOption;
}

/** What was saved. */
export interface SaveResult {
  blob?: Blob;
  bytes: number;
  signedAs: 'device' | 'account';
  account?: string;
  fingerprint: string;
  encrypted: boolean;
  /** Why the key could not be registered (saved as a device key then): the refusal's code and message. */
  registrationProblem?: { code: string; message: string };
  /** This browser's key for the account had been revoked, so a new one was made and registered first. */
  rotated?: boolean;
  /** A digest worker hashed the file for its signature (false: this worker did). */
  digestWorker: boolean;
}

/** What the page asks to open. */
export interface OpenArgs extends SessionArgs {
  file: Blob;
  fileName?: string;
  password?: string;
}

/** What the page gets first: the verdict, meta and the asset list; the snapshot unless the file is modified. */
export interface OpenResult {
  id: number;
  source: 'iki' | 'rigproj';
  verdict: Verdict;
  meta: OpenedMeta;
  assets: AssetInfo[];
  encrypted: boolean;
  snapshot?: Record<string, unknown>;
}

/**
 * A file whose key was refused: who signed it (decided without the key) and why it did not
 * open. `knownAccount` is set when the file is for another account that signed in on this
 * browser (with its e-mail address as it signed in), so the page can say "your other account".
 */
export interface LockedResult {
  locked: true;
  verdict: Verdict;
  refusal: { code: string; message: string; details?: Record<string, string | number> };
  knownAccount?: { email?: string };
}

/** An image's pixels, scaled to fit a preview. */
export interface Preview { width: number; height: number; rgba: Uint8ClampedArray; sourceWidth: number; sourceHeight: number }

/** The browser key and its registration, for the key panel. */
export interface KeyInfo extends DeviceKeyInfo { certificate?: CertificateFields }

const opened = new Map<number, OpenedProject>();
/** The digest worker, started by the first save that names one and kept for the next. */
let digests: WorkerDigests | undefined;

/**
 * A digester on the digest worker for one save; none (this worker hashes) when the page named
 * no digest worker or this browser cannot start one here.
 */
function fileDigest(option: DigestWorkerOption | undefined): { fileDigest?: FileDigester } {
  if (option === undefined) return {};
  try {
    digests ??= new WorkerDigests(option);
    return { fileDigest: digests.digester() };
  } catch {
    return {};
  }
}
let nextId = 1;

/** The account whose key signs for `args`: the signed-in one, or none (the signed-out key). */
function ownerOf(args: SessionArgs): string | undefined {
  return args.accessToken !== undefined && args.accountId !== undefined ? args.accountId : undefined;
}

/**
 * This browser's key for the signed-in account, or the signed-out key (device-key.ts), read
 * afresh each time: another tab may have replaced a revoked key since.
 */
function key(args: SessionArgs): Promise<DeviceKey> {
  const account = ownerOf(args);
  return DeviceKey.open(account === undefined ? {} : { account });
}

function keyService(args: SessionArgs): KeyServiceApi {
  const token = args.accessToken;
  return keyServiceClient(fetchRequest(args.baseUrl ?? globalThis.location.origin, { token: () => token }));
}

function project(id: number): OpenedProject {
  const found = opened.get(id);
  if (found === undefined) throw new Error('this project is closed');
  return found;
}

/** Forwards progress at most every 100 ms (and the last update). */
function throttled(context: TaskContext<ProjectTaskProgress>): (p: ProjectTaskProgress) => void {
  let last = 0;
  return (p) => {
    const now = Date.now();
    if (now - last < 100 && p.done < p.total) return;
    last = now;
    context.progress(p);
  };
}

/** The public facts of the key that signs for `args` (the signed-in account's, else the signed-out one). */
async function keyInfo(args: SessionArgs = {}): Promise<KeyInfo> {
  return describe(await key(args));
}

async function describe(k: DeviceKey): Promise<KeyInfo> {
  const certificate = await k.certificate();
  return { ...k.info(), ...(certificate === undefined ? {} : { certificate }) };
}

/** Registers the signed-in account's key on this browser (a new one when the account revoked it). */
async function registerKey(args: SessionArgs): Promise<KeyInfo & { rotated: boolean }> {
  const account = ownerOf(args);
  if (account === undefined) throw new Error('sign in to register this browser\'s key');
  const { key: k, rotated } = await DeviceKey.registered(keyService(args), account, args.email);
  return { ...(await describe(k)), rotated };
}

/** The document to save: given by the page, or an opened project saved again. */
interface Document {
  snapshot: Record<string, unknown>;
  assets: ProjectAsset[];
  name: string;
  canvas: { width: number; height: number };
}

/**
 * Hashes files as the user picks them (issue 28 item 4), while they go on working: the save
 * then finds each digest remembered (by the File's name, size and lastModified) and reads
 * every asset once. A file that cannot be read is left for the save to report.
 */
async function rememberAssets(args: { files: Blob[] }): Promise<void> {
  await assetDigests.remember(args.files).catch(() => undefined);
}

async function save(args: SaveArgs, context: TaskContext<ProjectTaskProgress>): Promise<SaveResult> {
  return saveDocument(args, args, context);
}

/**
 * Refuses a password the CLI would refuse (`iki pack`'s check, password-strength.ts): a file's
 * password slot can be guessed offline. The words are the CLI's; `score` lets the page say it
 * in its own language.
 */
async function checkPassword(password: string, context: readonly string[]): Promise<void> {
  const strength = await passwordStrength(password, ['iki', ...context]);
  if (strength.score >= MIN_SCORE) return;
  const words = describeWeakness(strength);
  throw new ProjectError('WEAK_PASSWORD', `${words.charAt(0).toUpperCase()}${words.slice(1)} ${CHOOSE_ANOTHER}.`,
    { score: strength.score, guessesLog10: Math.round(strength.guessesLog10) });
}

async function saveDocument(args: SessionArgs & Omit<SaveArgs, 'snapshot' | 'assets' | 'name' | 'canvas'>, doc: Document,
  context: TaskContext<ProjectTaskProgress>): Promise<SaveResult> {
  if (args.password !== undefined) await checkPassword(args.password, [doc.name, ...(args.email === undefined ? [] : [args.email])]);
  let k = await key(args);
  let registrationProblem: SaveResult['registrationProblem'];
  let rotated = false;
  const signedIn = ownerOf(args) !== undefined;
  if (signedIn) {
    try {
      ({ key: k, rotated } = await DeviceKey.registered(keyService(args), args.accountId as string, args.email));
    } catch (error) {
      // Saving still works, signed as this device (the account's key on this browser, never
      // claiming the account); the page says why in plain words.
      k = await key(args);
      registrationProblem = { code: (error as { code?: string }).code ?? 'ERROR', message: (error as Error).message };
    }
  }
  const signer = await k.signer(args.accountId);
  let digestWorker = false;
  const attempt = async (): Promise<SavedProject> => {
    const output = args.output === undefined ? undefined : await args.output.createWritable();
    const digest = fileDigest(args.digest);
    digestWorker = digest.fileDigest !== undefined;
    return saveProject({
      ...digest,
      snapshot: doc.snapshot, assets: doc.assets, signer, app: args.app, name: doc.name, canvas: doc.canvas,
      ...(output === undefined ? {} : { output }), onProgress: throttled(context),
      protection: {
        ...(args.password === undefined ? {} : { password: args.password }),
        ...(args.forAccount === true && signedIn ? { account: keyService(args) } : {}),
      },
    }).catch(async (error: unknown) => {
      await output?.abort().catch(() => undefined);
      throw error;
    });
  };
  // A digest remembered for a file of the same name, size and time that did not match its
  // bytes was forgotten by the failed save: the second one hashes the file (digests.ts).
  const saved = await attempt().catch((error: unknown) => {
    if ((error as { code?: string }).code !== 'HASH_MISMATCH') throw error;
    return attempt();
  });
  const claim = signer.claim ?? { kind: 'device' as const };
  return {
    ...(saved.blob === undefined ? {} : { blob: saved.blob }), bytes: saved.bytes, signedAs: claim.kind,
    ...(claim.account === undefined ? {} : { account: claim.account }), fingerprint: k.info().fingerprint,
    encrypted: saved.encrypted, ...(registrationProblem === undefined ? {} : { registrationProblem }), ...(rotated ? { rotated } : {}),
    digestWorker,
  };
}

async function open(args: OpenArgs, context: TaskContext<ProjectTaskProgress>): Promise<OpenResult | LockedResult> {
  try {
    return await openUnlocked(args, context);
  } catch (error) {
    if (!(error instanceof ProjectError) || error.verdict === undefined) throw error;
    const named = error.details?.['accountId'];
    const known = typeof named === 'string' && named !== ownerOf(args) ? await DeviceKey.knownAccount(named) : undefined;
    return { locked: true, verdict: error.verdict,
      refusal: { code: error.code, message: error.message, ...(error.details === undefined ? {} : { details: error.details }) },
      ...(known === undefined ? {} : { knownAccount: known }) };
  }
}

async function openUnlocked(args: OpenArgs, context: TaskContext<ProjectTaskProgress>): Promise<OpenResult> {
  const service = keyService(args);
  const lastKnown = await lastKnownIssuer();
  const thisKey = (await key(args)).info().publicKey;
  const result = await openProject(args.file, {
    keyService: service, thisDeviceKey: thisKey, onProgress: throttled(context),
    ...(lastKnown === undefined ? {} : { lastKnownIssuer: lastKnown }),
    ...(args.password === undefined ? {} : { password: args.password }),
    ...(args.fileName === undefined ? {} : { fileName: args.fileName }),
    ...(args.accessToken !== undefined && args.accountId !== undefined
      ? { session: { accountId: args.accountId, ...(args.email === undefined ? {} : { email: args.email }), keyService: service } } : {}),
  });
  if (result.fetchedIssuer !== undefined) await rememberIssuer(result.fetchedIssuer);
  const id = nextId++;
  opened.set(id, result);
  return {
    id, source: result.source, verdict: result.verdict, meta: result.meta, assets: [...result.assets], encrypted: result.encrypted,
    ...(result.acknowledged ? { snapshot: result.snapshot() } : {}),
  };
}

/** After the page showed the "modified" warning and the user chose to look: the snapshot. */
async function acknowledge(args: { id: number }): Promise<Record<string, unknown>> {
  const p = project(args.id);
  p.acknowledge();
  return p.snapshot();
}

/** One asset's bytes, moved to the page. */
async function readAsset(args: { id: number; name: string }, context: TaskContext<never>): Promise<Uint8Array> {
  const bytes = await project(args.id).readAsset(args.name);
  context.transfer([bytes.buffer]);
  return bytes;
}

/** Image types whose pixels are decoded for a preview (by the WASM decoder; never SVG or HTML). */
const PREVIEWED = new Set(['image/png', 'image/jpeg', 'image/webp']);

/** An image asset's pixels scaled (nearest) to fit `maxSide`, moved to the page. */
async function preview(args: { id: number; name: string; maxSide: number }, context: TaskContext<never>): Promise<Preview | null> {
  const p = project(args.id);
  if (!PREVIEWED.has(p.asset(args.name).type)) return null;
  const image = decodeImage(await p.readAsset(args.name));
  const scale = Math.min(1, args.maxSide / Math.max(image.width, image.height));
  const width = Math.max(1, Math.round(image.width * scale));
  const height = Math.max(1, Math.round(image.height * scale));
  const rgba = new Uint8ClampedArray(width * height * 4);
  for (let y = 0; y < height; y++) {
    const sy = Math.min(image.height - 1, Math.floor(y / scale));
    for (let x = 0; x < width; x++) {
      const sx = Math.min(image.width - 1, Math.floor(x / scale));
      rgba.set(image.rgba.subarray((sy * image.width + sx) * 4, (sy * image.width + sx) * 4 + 4), (y * width + x) * 4);
    }
  }
  image.rgba.fill(0);
  context.transfer([rgba.buffer]);
  return { width, height, rgba, sourceWidth: image.width, sourceHeight: image.height };
}

/** Saves the opened project again as a new file, signed by this browser's key (its assets stream from the opened file). */
async function saveOpened(args: Omit<SaveArgs, 'snapshot' | 'assets' | 'name' | 'canvas'> & { id: number },
  context: TaskContext<ProjectTaskProgress>): Promise<SaveResult> {
  return saveDocument(args, project(args.id).toSave(), context);
}

async function close(args: { id: number }): Promise<void> {
  opened.get(args.id)?.close();
  opened.delete(args.id);
}

/** The tasks of the project worker (server/web/workers/project.ts exposes them). */
export const projectTasks = { keyInfo, registerKey, rememberAssets, save, open, acknowledge, readAsset, preview, saveOpened, close };

/** Their types, for `WorkerClient<ProjectTasks>`. */
export type ProjectTasks = typeof projectTasks;
