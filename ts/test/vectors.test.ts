// Every container vector of testdata/container (layout in testdata/README.md)
// through the TS API: whole, and streamed 7 bytes at a time, each with its
// expected outcome (an error code, or `ok` with the payload hash).
import { readFileSync, readdirSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { ContentKey, type Kind, type Unlock, openContainer } from '../src/container.js';
import { IkiError } from '../src/errors.js';
import { X25519Identity } from '../src/keys.js';
import { loadWasm } from '../src/wasm.js';
import { inPieces } from './container-support.js';

const DIR = new URL('../../testdata/container/', import.meta.url);

interface Vector {
  name: string;
  expect: string;
  kind: Kind;
  fields: Map<string, string>;
  bytes: Uint8Array;
}

function parse(name: string, file: Uint8Array): Vector {
  const marker = Buffer.from('\n---\n');
  const split = Buffer.from(file).indexOf(marker);
  if (split < 0) throw new Error(`${name}: no --- line`);
  const fields = new Map<string, string>();
  for (const line of new TextDecoder().decode(file.subarray(0, split)).split('\n')) {
    const at = line.indexOf(': ');
    fields.set(line.slice(0, at), line.slice(at + 2));
  }
  const kind = fields.get('kind');
  if (kind !== 'project' && kind !== 'model') throw new Error(`${name}: kind ${kind}`);
  return { name, expect: fields.get('expect') ?? '?', kind, fields, bytes: file.subarray(split + marker.length) };
}

const VECTORS = readdirSync(DIR)
  .filter((f) => f.endsWith('.ikv'))
  .sort()
  .map((f) => parse(f.replace(/\.ikv$/, ''), new Uint8Array(readFileSync(new URL(f, DIR)))));

function hex(text: string): Uint8Array {
  return new Uint8Array(Buffer.from(text, 'hex'));
}

/** Opens a vector, freeing its key handle; returns the payload hash or the error code. */
async function outcome(v: Vector, source: Uint8Array | AsyncIterable<Uint8Array>): Promise<string> {
  const password = v.fields.get('password');
  const identity = v.fields.has('identity') ? X25519Identity.fromBytes(hex(v.fields.get('identity')!)) : undefined;
  const contentKey = v.fields.has('content-key') ? ContentKey.fromBytes(hex(v.fields.get('content-key')!)) : undefined;
  const unlock: Unlock | undefined =
    password !== undefined ? { password } : identity ? { identity } : contentKey ? { contentKey } : undefined;
  try {
    const opened = await openContainer(source, { kind: v.kind, ...(unlock ? { unlock } : {}) });
    const payload = createHash('sha256');
    for (const e of opened.manifest?.entries ?? []) payload.update(opened.entries.get(e.path) ?? new Uint8Array(0));
    return `ok ${payload.digest('hex')}`;
  } catch (error) {
    if (!(error instanceof IkiError)) throw error;
    return error.code;
  } finally {
    identity?.free();
    contentKey?.free();
  }
}

beforeAll(async () => {
  await loadWasm();
});

describe('container vectors', () => {
  it('are all there', () => {
    expect(VECTORS.length).toBeGreaterThanOrEqual(100);
    expect(VECTORS.filter((v) => v.expect === 'ok').length).toBeGreaterThan(10);
  });

  it.each(VECTORS.map((v) => [v.name, v] as const))('%s', async (_, v) => {
    const want = v.expect === 'ok' ? `ok ${v.fields.get('payload-sha256')}` : v.expect;
    expect(await outcome(v, v.bytes)).toBe(want);
    expect(await outcome(v, inPieces(v.bytes, 7))).toBe(want);
  });
});
