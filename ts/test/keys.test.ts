// Key handles against RFC test vectors, key files (docs/format.md section 12)
// and base64url (RFC 4648 section 5).
import { createPublicKey, verify } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { IkiError } from '../src/errors.js';
import {
  ContentKey,
  SigningKey,
  X25519Identity,
  decodeKeyFile,
  encodeKeyFile,
  fromBase64Url,
  toBase64Url,
} from '../src/keys.js';
import { loadWasm } from '../src/wasm.js';
import { sample } from './container-support.js';

const hex = (text: string) => new Uint8Array(Buffer.from(text, 'hex'));
const utf8 = (text: string) => new TextEncoder().encode(text);

beforeAll(async () => {
  await loadWasm();
});

describe('key handles', () => {
  it('Ed25519 public key from a seed (RFC 8032 section 7.1, test 1)', () => {
    const key = SigningKey.fromSeed(hex('9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60'));
    expect(Buffer.from(key.publicKey).toString('hex')).toBe('d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a');
    expect(Buffer.from(key.exportSeed()).toString('hex')).toBe('9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60');
    key.free();
  });

  it('X25519 public key from a secret (RFC 7748 section 6.1, Alice)', () => {
    const id = X25519Identity.fromBytes(hex('77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a'));
    expect(Buffer.from(id.publicKey).toString('hex')).toBe('8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a');
    id.free();
  });

  it('generated keys differ and export what re-imports to the same key', () => {
    const [a, b] = [SigningKey.generate(), SigningKey.generate()];
    expect(a.publicKey).toHaveLength(32);
    expect(a.publicKey).not.toEqual(b.publicKey);
    const again = SigningKey.fromSeed(a.exportSeed());
    expect(again.publicKey).toEqual(a.publicKey);
    const id = X25519Identity.generate();
    expect(X25519Identity.fromBytes(id.exportSecret()).publicKey).toEqual(id.publicKey);
    for (const k of [a, b, again, id]) k.free();
  });

  it('make a registration proof that verifies under the public key (Ed25519, node:crypto)', () => {
    const key = SigningKey.fromSeed(hex('9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60'));
    const proof = key.registrationProof('acct_ada');
    expect(proof).toHaveLength(64);
    const spki = Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), key.publicKey]);
    const publicKey = createPublicKey({ key: spki, format: 'der', type: 'spki' });
    const message = (account: string) => Buffer.concat([Buffer.from('IKI-KEY-REGISTRATION-V1'), Buffer.from([0]), Buffer.from(account)]);
    expect(verify(null, message('acct_ada'), publicKey, proof)).toBe(true);
    expect(verify(null, message('acct_bob'), publicKey, proof)).toBe(false);
    expect(() => key.registrationProof('')).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }));
    expect(() => key.registrationProof(7 as unknown as string)).toThrow(TypeError);
    key.free();
  });

  it('free() is idempotent and later use is INVALID_STATE', () => {
    for (const k of [SigningKey.generate(), X25519Identity.generate(), ContentKey.generate()]) {
      k.free();
      k.free();
    }
    const key = SigningKey.generate();
    key.free();
    expect(() => key.publicKey).toThrow(IkiError);
    expect(() => key.exportSeed()).toThrow(expect.objectContaining({ code: 'INVALID_STATE' }));
  });

  it('refuse secrets of the wrong type or length before WASM, naming the argument', () => {
    expect(() => SigningKey.fromSeed(new Uint8Array(31))).toThrow(RangeError);
    expect(() => SigningKey.fromSeed(new Uint8Array(33))).toThrow(/seed/);
    expect(() => SigningKey.fromSeed([1, 2] as unknown as Uint8Array)).toThrow(TypeError);
    expect(() => X25519Identity.fromBytes(new Uint8Array(16))).toThrow(/secret/);
    expect(() => ContentKey.fromBytes(new Uint8Array(0))).toThrow(RangeError);
    expect(() => ContentKey.fromHandle({} as never)).toThrow(TypeError);
  });
});

describe('base64url', () => {
  it('RFC 4648 section 10 vectors, without padding', () => {
    const vectors: [string, string][] = [['', ''], ['f', 'Zg'], ['fo', 'Zm8'], ['foo', 'Zm9v'], ['foob', 'Zm9vYg'], ['fooba', 'Zm9vYmE'], ['foobar', 'Zm9vYmFy']];
    for (const [text, encoded] of vectors) {
      expect(toBase64Url(utf8(text))).toBe(encoded);
      expect(fromBase64Url(encoded)).toEqual(utf8(text));
    }
    expect(toBase64Url(new Uint8Array([0xfb, 0xff]))).toBe('-_8');
  });

  it('matches Node for every length up to 100', () => {
    for (let n = 0; n <= 100; n++) {
      const bytes = sample(n, n, true);
      const text = Buffer.from(bytes).toString('base64url');
      expect(toBase64Url(bytes)).toBe(text);
      expect(fromBase64Url(text)).toEqual(bytes);
    }
  });

  it('refuses padding, stray characters, dangling characters, spare bits and wrong lengths', () => {
    for (const bad of ['Zg==', 'Zm9v+', 'Zm9v/', 'Z', 'Zm9vY', 'Zh', 'Zm9', ' Zm9v']) {
      expect(() => fromBase64Url(bad), bad).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }));
    }
    expect(() => fromBase64Url('Zm9v', 4)).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT', details: expect.objectContaining({ expected: 4, actual: 3 }) }));
    expect(fromBase64Url('Zm9v', 3)).toEqual(utf8('foo'));
    expect(() => fromBase64Url(42 as unknown as string)).toThrow(TypeError);
    expect(() => toBase64Url('foo' as unknown as Uint8Array)).toThrow(TypeError);
  });
});

describe('key files', () => {
  const secret = new Uint8Array(32).map((_, i) => i * 7);

  it('are a header line and the base64url secret', () => {
    const text = encodeKeyFile('ed25519', secret);
    expect(text).toBe(`iki-ed25519-secret-v1\n${Buffer.from(secret).toString('base64url')}\n`);
    expect(decodeKeyFile(text)).toEqual({ kind: 'ed25519', secret });
    const x = encodeKeyFile('x25519', secret);
    expect(x.startsWith('iki-x25519-secret-v1\n')).toBe(true);
    expect(decodeKeyFile(x)).toEqual({ kind: 'x25519', secret });
  });

  it('accept CRLF and a missing final newline', () => {
    const body = Buffer.from(secret).toString('base64url');
    expect(decodeKeyFile(`iki-x25519-secret-v1\r\n${body}\r\n`).secret).toEqual(secret);
    expect(decodeKeyFile(`iki-x25519-secret-v1\n${body}`).secret).toEqual(secret);
  });

  it('refuse anything else as INVALID_ARGUMENT', () => {
    const body = Buffer.from(secret).toString('base64url');
    const bad = [
      '',
      body,
      `iki-rsa-secret-v1\n${body}\n`,
      `iki-ed25519-secret-v2\n${body}\n`,
      `iki-ed25519-secret-v1\n${body}\nextra\n`,
      `iki-ed25519-secret-v1\n\n${body}\n`,
      `iki-ed25519-secret-v1\n${body.slice(1)}\n`,
      `iki-ed25519-secret-v1\n${Buffer.from(secret).toString('base64')}\n`,
      ` iki-ed25519-secret-v1\n${body}\n`,
    ];
    for (const text of bad) expect(() => decodeKeyFile(text), JSON.stringify(text)).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }));
  });

  it('check their arguments', () => {
    expect(() => encodeKeyFile('rsa' as 'ed25519', secret)).toThrow(TypeError);
    expect(() => encodeKeyFile('ed25519', new Uint8Array(31))).toThrow(RangeError);
    expect(() => decodeKeyFile(undefined as unknown as string)).toThrow(TypeError);
  });
});
