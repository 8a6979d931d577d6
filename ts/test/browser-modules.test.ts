// The DOM-free browser modules of @iki/core/browser, in Node: the API client against a real
// HTTP server (token, JSON, 204, error bodies, 401, network failure, abort), errors across the
// worker boundary, the package assembler's refusals, and the plain words.
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiClient, ApiProblem } from '../src/browser/api.js';
import { DamagedCopy, MAX_DECODED_BYTES, PackageAssembler, wipePackage } from '../src/browser/package-assembler.js';
import { plainWords } from '../src/browser/words.js';
import { errorFromWire, errorToWire } from '../src/browser/worker-rpc.js';
import type { EntryInfo, ReadEvent, Verified } from '../src/container.js';
import { IkiError } from '../src/errors.js';

/** The ApiProblem a call rejects with (a call that resolves fails the test). */
const refusal = (call: Promise<unknown>): Promise<ApiProblem> =>
  call.then(() => { throw new Error('the call succeeded'); }, (e: unknown) => e as ApiProblem);

let server: Server;
let base: string;
const seen: { method?: string; url?: string; authorization?: string; body: string }[] = [];

function answer(req: IncomingMessage, res: ServerResponse, body: string): void {
  seen.push({ method: req.method, url: req.url, authorization: req.headers.authorization, body });
  if (req.url === '/echo') {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ got: JSON.parse(body) }));
  } else if (req.url === '/empty') {
    res.writeHead(204).end();
  } else if (req.url === '/limited') {
    res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '90', 'x-request-id': 'req_h' })
      .end(JSON.stringify({ error: { code: 'RATE_LIMITED', message: 'too many', details: { scope: 'user' }, requestId: 'req_b' } }));
  } else if (req.url === '/expired') {
    res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { code: 'UNAUTHENTICATED', message: 'expired', requestId: 'req_x' } }));
  } else if (req.url === '/proxy-error') {
    res.writeHead(502, { 'content-type': 'text/html', 'x-request-id': 'req_p' }).end('<h1>Bad gateway</h1>');
  } else {
    // Never answers: for the abort test.
  }
}

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => { body += c.toString(); });
    req.on('end', () => answer(req, res, body));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe('ApiClient', () => {
  it('sends the token and JSON, and reads JSON and 204 answers', async () => {
    let token: string | null = 'tok';
    const api = new ApiClient({ baseUrl: base, token: () => token });
    expect(await api.call('/echo', { method: 'POST', json: { a: 1 } })).toEqual({ got: { a: 1 } });
    expect(seen.at(-1)).toMatchObject({ method: 'POST', authorization: 'Bearer tok', body: '{"a":1}' });
    token = null;
    expect(await api.call('/empty', { method: 'DELETE' })).toBeNull();
    expect(seen.at(-1)?.authorization).toBeUndefined();
  });

  it('turns error answers into ApiProblems; a 401 calls onUnauthorized first', async () => {
    let signedOut = 0;
    const api = new ApiClient({ baseUrl: base, onUnauthorized: () => { signedOut += 1; } });
    const limited = await refusal(api.call('/limited'));
    expect(limited).toBeInstanceOf(ApiProblem);
    expect(limited.toJSON()).toEqual({ status: 429, code: 'RATE_LIMITED', message: 'too many',
      requestId: 'req_b', details: { scope: 'user' }, retryAfterSeconds: 90 });
    expect(plainWords(limited)).toBe('Too many key releases for this account recently.');
    const proxy = await refusal(api.call('/proxy-error'));
    expect([proxy.status, proxy.code, proxy.message, proxy.requestId]).toEqual([502, 'HTTP_ERROR', 'HTTP 502', 'req_p']);
    expect(signedOut).toBe(0);
    const expired = await refusal(api.call('/expired'));
    expect([expired.status, expired.code]).toEqual([401, 'UNAUTHENTICATED']);
    expect(signedOut).toBe(1);
    expect(plainWords(expired)).toBe('Your session has ended. Please sign in again.');
  });

  it('words the limits of uploads, copies and identify with the wait they name', () => {
    const problem = (code: string, details: Record<string, unknown> | null, retryAfterSeconds: number | null = null) =>
      new ApiProblem({ status: 429, code, message: 'm', requestId: 'req_x', details, retryAfterSeconds });
    expect(plainWords(problem('COPY_RATE_LIMITED', { scope: 'license' }, 23 * 3600)))
      .toBe('Too many downloads of this license recently. Try again in 23 hours.');
    expect(plainWords(problem('COPY_RATE_LIMITED', { scope: 'user' }, 3600))).toBe('Too many downloads for this account recently. Try again in 60 minutes.');
    expect(plainWords(problem('TOO_MANY_DOWNLOADS', { scope: 'user' }))).toBe('Other downloads of yours are still running. Try again when one has finished.');
    expect(plainWords(problem('TOO_MANY_UPLOADS', { limit: 2 }))).toBe('Other uploads of yours are still running. Try again when one has finished.');
    expect(plainWords(problem('IDENTIFY_RATE_LIMITED', { retryAfterSeconds: 61 }))).toBe('Too many identify requests recently. Try again in 2 minutes.');
    expect(plainWords(new ApiProblem({ status: 413, code: 'STORAGE_QUOTA_EXCEEDED', message: 'm', requestId: null, details: null,
      retryAfterSeconds: null }))).toBe('This master would take your stored masters past your storage quota.');
  });

  it('reports an unreachable service as NETWORK and an abort as the signal\'s reason', async () => {
    const api = new ApiClient({ baseUrl: 'http://127.0.0.1:1' });
    const down = await refusal(api.call('/x'));
    expect([down.status, down.code]).toEqual([0, 'NETWORK']);
    const controller = new AbortController();
    const pending = new ApiClient({ baseUrl: base }).call('/hang', { signal: controller.signal }).catch((e: unknown) => e);
    controller.abort(new DOMException('stop', 'AbortError'));
    expect(await pending).toMatchObject({ name: 'AbortError', message: 'stop' });
  });
});

describe('errors across the worker boundary', () => {
  it('keep their class, code, details and cause', () => {
    const api = ApiProblem.fromAnswer(410, { error: { code: 'LICENSE_REVOKED', message: 'revoked', requestId: 'req_r' } });
    const back = errorFromWire(structuredClone(errorToWire(api)));
    expect(back).toBeInstanceOf(ApiProblem);
    expect((back as ApiProblem).toJSON()).toEqual(api.toJSON());
    const iki = new IkiError('BAD_SIGNATURE', 'bad signature', { offset: 12 });
    const damaged = new DamagedCopy('entry 2 is incomplete', { cause: iki });
    const revived = errorFromWire(structuredClone(errorToWire(damaged)));
    expect(revived).toBeInstanceOf(DamagedCopy);
    expect(revived.message).toBe('entry 2 is incomplete');
    expect(revived.cause).toBeInstanceOf(IkiError);
    expect(revived.cause).toMatchObject({ code: 'BAD_SIGNATURE', details: { offset: 12 } });
    const abort = errorFromWire(errorToWire(new DOMException('cancelled', 'AbortError')));
    expect([abort.name, abort.message]).toEqual(['AbortError', 'cancelled']);
    const other = errorFromWire(errorToWire(Object.assign(new RangeError('too big'), { code: 'SOMETHING' })));
    expect([other.name, other.message, (other as { code?: string }).code]).toEqual(['RangeError', 'too big', 'SOMETHING']);
    // An unknown code does not become an IkiError.
    expect(errorFromWire({ name: 'IkiError', message: 'x', code: 'NOT_A_CODE' })).not.toBeInstanceOf(IkiError);
    expect(errorFromWire(errorToWire('a string'))).toMatchObject({ name: 'Error', message: 'a string' });
  });
});

describe('PackageAssembler', () => {
  const entry = (path: string, size: number): EntryInfo => ({ path, type: 'application/octet-stream', size, encoding: 'stored' });
  const verified = { publicKey: new Uint8Array(32), signer: { kind: 'service' }, signerJson: '{}' } as unknown as Verified;
  const manifest = (...entries: EntryInfo[]): ReadEvent => ({ type: 'manifest', manifest: { entries, meta: {} } });
  const chunk = (e: number, data: number[]): ReadEvent => ({ type: 'chunk', entry: e, index: 0, last: true, data: Uint8Array.from(data) });

  it('assembles one buffer per file, counting progress, and wipes them', () => {
    const progress: number[][] = [];
    const assembler = new PackageAssembler((done, total) => progress.push([done, total]));
    for (const event of [manifest(entry('a', 3), entry('b', 0)), chunk(0, [1, 2]), chunk(0, [3]),
      { type: 'entryVerified', entry: 0 } as ReadEvent, { type: 'end', verified } as ReadEvent]) assembler.add(event);
    const pkg = assembler.result();
    expect(pkg.files.map((f) => [f.info.path, Array.from(f.bytes), f.verified])).toEqual([['a', [1, 2, 3], true], ['b', [], false]]);
    expect(progress).toEqual([[0, 3], [2, 3], [3, 3]]);
    expect(pkg.files[0]?.bytes.buffer.byteLength).toBe(3);
    wipePackage(pkg);
    expect(Array.from(pkg.files[0]?.bytes ?? [])).toEqual([0, 0, 0]);
  });

  it.each([
    ['a chunk before the manifest', [chunk(0, [1])], 'names entry 0'],
    ['a chunk of an unlisted entry', [manifest(entry('a', 1)), chunk(1, [1])], 'names entry 1'],
    ['an entry longer than its size', [manifest(entry('a', 1)), chunk(0, [1, 2])], 'longer than its manifest size'],
    ['an incomplete entry at the end', [manifest(entry('a', 2)), chunk(0, [1]), { type: 'end', verified } as ReadEvent], 'entry 0 is incomplete'],
    ['a second manifest', [manifest(entry('a', 0)), manifest(entry('a', 0))], 'unexpected manifest'],
    ['more than the page holds', [manifest(entry('a', MAX_DECODED_BYTES), entry('b', 1))], 'larger (1.0 GiB) than this page holds'],
    ['a negative size', [manifest(entry('a', -1))], 'than this page holds'],
  ])('refuses %s as a DamagedCopy', (_name, events, message) => {
    const run = () => {
      const assembler = new PackageAssembler();
      for (const e of events as ReadEvent[]) assembler.add(e);
    };
    expect(run).toThrow(DamagedCopy);
    expect(run).toThrow(message);
  });

  it('has no result before the signature verified', () => {
    const assembler = new PackageAssembler();
    assembler.add(manifest(entry('a', 1)));
    assembler.add(chunk(0, [9]));
    expect(() => assembler.result()).toThrow('the copy ended before its signature');
  });
});
