/**
 * Downloads that survive a cut connection (issue 16 item 4): when the body of a response
 * breaks off, the rest is asked for again with `Range: bytes=<received>-` and
 * `If-Range: <ETag>`, and the stream goes on from there as if nothing happened. The service
 * makes every download of a license copy byte-identical and says so with a strong ETag, so
 * the bytes after the cut are exactly the ones that were missing; a server that answers
 * anything else (another ETag, a range that does not start at the cut) ends the stream with
 * `ResumeRefused` instead of splicing two different files. Runs wherever `fetch` and web
 * streams do: the player's Web Worker and Node (the `iki download` command).
 */

/** Asks for the download again with `headers` added; resolves to a 2xx response or throws. */
export type OpenDownload = (headers: Record<string, string>) => Promise<Response>;

/** How a {@link resumableBody} retries. */
export interface ResumeOptions {
  /** Resumptions allowed in all (default 5). */
  attempts?: number;
  /** Milliseconds before the first retry, doubled each time (default 250). */
  retryDelayMs?: number;
  signal?: AbortSignal;
  /** Told before each resumption: where it resumes and which attempt it is. */
  onResume?: (offset: number, attempt: number) => void;
  /** Offset in the whole file of the first body's first byte (a download resumed from a file). */
  offset?: number;
}

/** A download could not be continued consistently. */
export class ResumeRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ResumeRefused';
  }
}

/** `bytes first-last/size` of a 206 answer. */
export function contentRange(response: Response): { start: number; end: number; size: number | undefined } | undefined {
  const m = /^bytes ([0-9]+)-([0-9]+)\/([0-9]+|\*)$/.exec(response.headers.get('content-range') ?? '');
  if (m === null) return undefined;
  return { start: Number(m[1]), end: Number(m[2]), size: m[3] === '*' ? undefined : Number(m[3]) };
}

/** The size of the whole file a (possibly ranged) answer belongs to, when it says. */
export function totalSize(response: Response): number | undefined {
  if (response.status === 206) return contentRange(response)?.size;
  const length = response.headers.get('content-length');
  return length === null || !/^[0-9]+$/.test(length) ? undefined : Number(length);
}

const sleep = (ms: number, signal: AbortSignal | undefined) => new Promise<void>((resolve, reject) => {
  const timer = setTimeout(resolve, ms);
  signal?.addEventListener('abort', () => {
    clearTimeout(timer);
    reject(signal.reason);
  }, { once: true });
});

/** A reader of `body` that drops its first `skip` bytes. */
function skipping(body: ReadableStream<Uint8Array>, skip: number): ReadableStreamDefaultReader<Uint8Array> {
  let left = skip;
  return body.pipeThrough(new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      if (left >= chunk.byteLength) {
        left -= chunk.byteLength;
        return;
      }
      controller.enqueue(left === 0 ? chunk : chunk.subarray(left));
      left = 0;
    },
  })).getReader();
}

/**
 * The body of `first`, continued after every cut by asking `open` for the rest (see the file
 * comment). Only a response with a strong ETag and `Accept-Ranges: bytes` is resumed; any
 * other breaks as it would have. Aborting `options.signal` stops it at once.
 */
export function resumableBody(open: OpenDownload, first: Response, options: ResumeOptions = {}): ReadableStream<Uint8Array> {
  if (first.body === null) throw new ResumeRefused('the answer has no body');
  const etag = first.headers.get('etag');
  const resumable = etag !== null && !etag.startsWith('W/') && first.headers.get('accept-ranges') === 'bytes';
  const maxAttempts = options.attempts ?? 5;
  let received = first.status === 206 ? contentRange(first)?.start ?? 0 : options.offset ?? 0;
  let reader: ReadableStreamDefaultReader<Uint8Array> = first.body.getReader();
  let attempts = 0;

  const reopen = async (): Promise<void> => {
    for (;;) {
      attempts += 1;
      options.onResume?.(received, attempts);
      await sleep((options.retryDelayMs ?? 250) * 2 ** (attempts - 1), options.signal);
      let response: Response;
      try {
        response = await open({ Range: `bytes=${received}-`, 'If-Range': etag as string });
      } catch (err) {
        if (options.signal?.aborted === true || attempts >= maxAttempts) throw err;
        continue;
      }
      if (response.body === null) throw new ResumeRefused('the resumed answer has no body');
      if (response.headers.get('etag') !== etag) {
        await response.body.cancel().catch(() => {});
        throw new ResumeRefused('the file changed since the download began (another ETag)');
      }
      if (response.status === 206) {
        if (contentRange(response)?.start !== received) {
          await response.body.cancel().catch(() => {});
          throw new ResumeRefused('the server resumed at another byte than asked for');
        }
        reader = response.body.getReader();
      } else {
        // The whole file again (the server ignored the range): the same bytes, so skip those we have.
        reader = skipping(response.body, received);
      }
      return;
    }
  };

  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      for (;;) {
        try {
          const { done, value } = await reader.read();
          if (done) {
            controller.close();
            return;
          }
          received += value.byteLength;
          controller.enqueue(value);
          return;
        } catch (err) {
          if (options.signal?.aborted === true || !resumable || attempts >= maxAttempts) throw err;
          await reopen();
        }
      }
    },
    async cancel(reason) {
      await reader.cancel(reason).catch(() => {});
    },
  });
}
