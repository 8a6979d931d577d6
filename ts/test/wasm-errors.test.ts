// Converting what WASM throws into IkiError, independent of any export.
import { describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../src/codes.js';
import { IkiError, callWasm, fromWasmError, isIkiErrorCode } from '../src/errors.js';

/** The shape the Rust adapter builds: a JS Error with code and details. */
function adapterError(code: string, message: string, details: Record<string, unknown> = {}): Error {
  return Object.assign(new Error(message), { code, details });
}

describe('fromWasmError', () => {
  it('turns an adapter error into IkiError with code, message, details and cause', () => {
    const thrown = adapterError('LIMIT_EXCEEDED', 'limit exceeded', { limit: 'MAX_HEAD_PAYLOAD_BYTES', value: 4097, max: 4096 });
    const error = fromWasmError(thrown);
    expect(error).toBeInstanceOf(IkiError);
    expect(error).toBeInstanceOf(Error);
    const iki = error as IkiError;
    expect(iki.name).toBe('IkiError');
    expect(iki.code).toBe('LIMIT_EXCEEDED');
    expect(iki.message).toBe('limit exceeded');
    expect(iki.details).toEqual({ limit: 'MAX_HEAD_PAYLOAD_BYTES', value: 4097, max: 4096 });
    expect(iki.cause).toBe(thrown);
  });

  it('drops detail values that are not strings or finite numbers, and empty details', () => {
    const iki = fromWasmError(adapterError('BAD_MANIFEST', 'bad manifest', { reason: 'x', n: NaN, o: {}, b: true })) as IkiError;
    expect(iki.details).toEqual({ reason: 'x' });
    expect((fromWasmError(adapterError('DECRYPT_FAILED', 'decryption failed')) as IkiError).details).toBeUndefined();
  });

  it('passes through errors without a known code (traps, bugs)', () => {
    const trap = new WebAssembly.RuntimeError('unreachable');
    expect(fromWasmError(trap)).toBe(trap);
    const unknownCode = adapterError('NOT_A_CODE', 'x');
    expect(fromWasmError(unknownCode)).toBe(unknownCode);
  });

  it('wraps non-error values in an Error', () => {
    const error = fromWasmError('boom');
    expect(error).not.toBeInstanceOf(IkiError);
    expect(error.message).toContain('boom');
  });

  it('falls back to the lowercased code when the message is empty', () => {
    expect(fromWasmError(adapterError('WEAK_KEY', '')).message).toBe('weak_key');
  });
});

describe('codes and callWasm', () => {
  it('recognises every listed code and nothing else', () => {
    for (const code of ERROR_CODES) expect(isIkiErrorCode(code)).toBe(true);
    expect(isIkiErrorCode('bad_magic')).toBe(false);
    expect(isIkiErrorCode(42)).toBe(false);
  });

  it('returns the value on success and converts on failure', () => {
    expect(callWasm(() => 7)).toBe(7);
    expect(() =>
      callWasm(() => {
        throw adapterError('TRUNCATED', 'truncated');
      }),
    ).toThrow(IkiError);
  });
});
