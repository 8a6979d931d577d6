/**
 * An opened package as a model runtime sees an unprotected one (SPEC "What the service does"
 * item 2: "the player resolves this package exactly as an unprotected one"; issue 12 item 3).
 *
 * The package's files get URLs under a base that names no server, `https://package.iki.invalid/
 * <id>/` (`.invalid` never resolves, RFC 2606), and {@link PackageResolver.fetch} is a
 * `fetch`-compatible function that answers those URLs from memory and nothing else: a runtime
 * given `resolver.modelUrl` and `resolver.fetch` loads `model3.json`, resolves its references
 * relative to it like any URL, and fetches every file. A URL or path outside the package, or
 * one the package does not hold, answers a 404 `Response` (and {@link PackageResolver.file}
 * throws {@link NotInPackage}); no request ever reaches the network.
 *
 * Textures are stored as decoded pixels (`rgba8`, docs/format.md section 5), so they are given
 * as what a renderer uploads: {@link PackageResolver.imageData} and
 * {@link PackageResolver.image} (an `ImageBitmap` made from the pixels in memory). Sounds are
 * decoded into an `AudioBuffer` by the caller's `AudioContext`; JSON files are text. Nothing
 * here makes a `blob:` or `data:` URL or touches any storage: the bytes stay in this page's
 * memory, and {@link PackageResolver.close} zero-fills them.
 */
import { wipePackage, type OpenedPackage, type PackageFile } from './package-assembler.js';
import type { PngEncoder } from './package-png.js';

/** The origin package URLs live under: reserved, never resolvable (RFC 2606 section 2). */
export const PACKAGE_ORIGIN = 'https://package.iki.invalid';

/** The media type of a texture's `Response` body: RGBA8 rows, top to bottom, no padding. */
export const RGBA8_MEDIA_TYPE = 'image/x-rgba8';

/** A path or URL that is not a file of the package (`code` `NOT_IN_PACKAGE`, like HTTP 404). */
export class NotInPackage extends Error {
  readonly code = 'NOT_IN_PACKAGE';
  readonly status = 404;
  /** What was asked for. */
  readonly reference: string;

  constructor(reference: string, why: string) {
    super(`${JSON.stringify(reference)} ${why}`);
    this.name = 'NotInPackage';
    this.reference = reference;
  }
}

/** The base URL of a package id: `https://package.iki.invalid/<id>/`. */
function baseFor(id: string): string {
  const segment = encodeURIComponent(id.replace(/[^A-Za-z0-9_.-]/g, '-').replace(/^\.+/, '') || 'package');
  return `${PACKAGE_ORIGIN}/${segment}/`;
}

const isModelJson = (path: string): boolean => path.toLowerCase().endsWith('.model3.json');

/** Options of {@link PackageResolver}. */
export interface PackageResolverOptions {
  /** Names the package in its URLs (for example the license id); `package` by default. */
  id?: string;
  /** Encodes textures for the package URLs off the page's main thread (package-png.ts). */
  pngEncoder?: PngEncoder;
}

/** The files of an opened package, resolved like URLs and fetched from memory. */
export class PackageResolver {
  /** `https://package.iki.invalid/<id>/`: every file's URL starts with it. */
  readonly baseUrl: string;
  /** The package path of the model JSON (`*.model3.json`), if the package has one. */
  readonly modelPath: string | undefined;
  /** The model JSON's URL: what a runtime is given to load, with {@link fetch}. */
  readonly modelUrl: string;
  /** What encodes this package's textures for its package URLs, if anything (package-urls.ts). */
  readonly pngEncoder: PngEncoder | undefined;
  readonly #files = new Map<string, PackageFile>();
  readonly #pkg: OpenedPackage;
  #closed = false;

  constructor(pkg: OpenedPackage, options: PackageResolverOptions = {}) {
    this.#pkg = pkg;
    for (const file of pkg.files) this.#files.set(file.info.path, file);
    this.baseUrl = baseFor(options.id ?? 'package');
    this.modelPath = pkg.files.map((f) => f.info.path).find(isModelJson);
    this.modelUrl = new URL(this.modelPath ?? '', this.baseUrl).href;
    this.pngEncoder = options.pngEncoder;
  }

  /** Every package path, in manifest order. */
  paths(): string[] {
    return [...this.#files.keys()];
  }

  /**
   * The package path `reference` names: a URL under {@link baseUrl}, or a reference resolved
   * like a URL against `relativeTo` (a package path or URL; the model JSON by default), so
   * `./a/../b.png`, `b.png` and `%62.png` name the same file. Throws {@link NotInPackage} for
   * anything outside the package (another origin, `../` past its root, a `blob:` URL, ...)
   * or not in it.
   */
  pathOf(reference: string | URL, relativeTo?: string): string {
    this.#checkOpen();
    const raw = String(reference);
    let url: URL;
    try {
      url = new URL(raw, relativeTo === undefined ? this.modelUrl : new URL(relativeTo, this.modelUrl));
    } catch {
      throw new NotInPackage(raw, 'is not a URL or path');
    }
    if (!url.href.startsWith(this.baseUrl)) throw new NotInPackage(raw, `is outside the package (${this.baseUrl})`);
    let path: string;
    try {
      path = decodeURIComponent(url.pathname.slice(new URL(this.baseUrl).pathname.length));
    } catch {
      throw new NotInPackage(raw, 'is not a valid percent-encoded path');
    }
    if (!this.#files.has(path)) throw new NotInPackage(raw, path === '' ? 'names the package root, not a file' : `is not in the package (${path})`);
    return path;
  }

  /** The file at `reference` (see {@link pathOf}); its bytes are the package's own, not a copy. */
  file(reference: string | URL, relativeTo?: string): PackageFile {
    return this.#files.get(this.pathOf(reference, relativeTo)) as PackageFile;
  }

  /** The URL of a package path. */
  urlOf(path: string): string {
    return new URL(path.split('/').map(encodeURIComponent).join('/'), this.baseUrl).href;
  }

  /**
   * A `Response` for `reference`, as a server of the unprotected package would answer: 200
   * with the file's bytes (a copy) and its media type, texture pixels as
   * `image/x-rgba8; width=W; height=H`; 404 with a plain-text reason when it is not a file of
   * the package.
   */
  resolve(reference: string | URL, relativeTo?: string): Response {
    let file: PackageFile;
    try {
      file = this.file(reference, relativeTo);
    } catch (err) {
      if (!(err instanceof NotInPackage)) throw err;
      return new Response(`iki: ${err.message}\n`, { status: 404, statusText: 'Not Found',
        headers: { 'content-type': 'text/plain; charset=utf-8', 'x-iki-error': err.code } });
    }
    const { info } = file;
    const type = info.encoding === 'rgba8'
      ? `${RGBA8_MEDIA_TYPE}; width=${info.meta?.width ?? 0}; height=${info.meta?.height ?? 0}`
      : info.type;
    return new Response(file.bytes.slice(), { status: 200, statusText: 'OK',
      headers: { 'content-type': type, 'content-length': String(file.bytes.length) } });
  }

  /**
   * `fetch` over the package: GET and HEAD of package URLs (and references relative to the
   * model JSON) answer from memory; anything else is a 404 `Response` or, for a method that
   * would send data, a 405. Never reaches the network.
   */
  readonly fetch = async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    const url = input instanceof Request ? input.url : input;
    const method = (init?.method ?? (input instanceof Request ? input.method : 'GET')).toUpperCase();
    init?.signal?.throwIfAborted();
    if (method !== 'GET' && method !== 'HEAD') {
      return new Response(`iki: the package is read-only (${method})\n`, { status: 405, statusText: 'Method Not Allowed',
        headers: { allow: 'GET, HEAD', 'content-type': 'text/plain; charset=utf-8' } });
    }
    const response = this.resolve(url);
    return method === 'HEAD' ? new Response(null, { status: response.status, headers: response.headers }) : response;
  };

  /** A JSON or other text file, decoded as UTF-8. */
  text(reference: string | URL, relativeTo?: string): string {
    return new TextDecoder('utf-8').decode(this.file(reference, relativeTo).bytes);
  }

  /** A JSON file, parsed. */
  json(reference: string | URL, relativeTo?: string): unknown {
    return JSON.parse(this.text(reference, relativeTo));
  }

  /** A texture's pixels as `ImageData` (a copy). Throws `TypeError` for a file that is not a texture. */
  imageData(reference: string | URL, relativeTo?: string): ImageData {
    const file = this.file(reference, relativeTo);
    const { width, height } = file.info.meta ?? {};
    if (file.info.encoding !== 'rgba8' || width === undefined || height === undefined
      || !Number.isSafeInteger(width) || !Number.isSafeInteger(height) || width * height * 4 !== file.bytes.length) {
      throw new TypeError(`${file.info.path} is not a texture of this package`);
    }
    return new ImageData(new Uint8ClampedArray(file.bytes), width, height);
  }

  /** A texture as an `ImageBitmap` made from its pixels in memory (no URL, no image decoder). */
  async image(reference: string | URL, relativeTo?: string): Promise<ImageBitmap> {
    const data = this.imageData(reference, relativeTo);
    try {
      return await createImageBitmap(data, { premultiplyAlpha: 'none', colorSpaceConversion: 'none' });
    } finally {
      data.data.fill(0);
    }
  }

  /** A sound decoded by `context` (`decodeAudioData` gets a copy, which it takes over). */
  audio(context: BaseAudioContext, reference: string | URL, relativeTo?: string): Promise<AudioBuffer> {
    const bytes = this.file(reference, relativeTo).bytes.slice();
    return context.decodeAudioData(bytes.buffer);
  }

  /** Zero-fills every file and refuses every later call. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    wipePackage(this.#pkg);
    this.#files.clear();
  }

  #checkOpen(): void {
    if (this.#closed) throw new NotInPackage('', 'cannot be resolved: the package was closed');
  }
}
