/**
 * Validation of request bodies with `ajv` (JSON Schema 2020-12). Every schema compiles once;
 * a body that fails is `VALIDATION_FAILED` with the failing paths in `details.errors`.
 * Base64url values are decoded here, after validation, and must be canonical.
 */
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import { ApiError } from '../errors.js';
import { NO_CONTROL_CHARACTERS } from './requests.js';

const ajv = new Ajv2020({ allErrors: true, strict: true, coerceTypes: false, useDefaults: false });
const compiled = new Map<object, ValidateFunction>();

/** Whether `error` is the control-character rule of every text field (requests.ts). */
const controlCharacters = (error: ErrorObject) =>
  error.keyword === 'pattern' && (error.params as { pattern?: unknown }).pattern === NO_CONTROL_CHARACTERS;

/** Checks `value` against `schema`; returns it typed or throws `VALIDATION_FAILED`. */
export function validate<T>(schema: object, value: unknown): T {
  let check = compiled.get(schema);
  if (check === undefined) {
    check = ajv.compile(schema);
    compiled.set(schema, check);
  }
  if (!check(value)) {
    const errors = (check.errors ?? []).slice(0, 20).map((e) => ({
      path: e.instancePath === '' ? '/' : e.instancePath,
      message: controlCharacters(e) ? 'must not contain control characters (U+0000 to U+001F, U+007F to U+009F)' : e.message ?? 'invalid',
      ...(e.keyword === 'additionalProperties'
        ? { field: String((e.params as { additionalProperty?: unknown }).additionalProperty) } : {}),
    }));
    throw new ApiError('VALIDATION_FAILED', 'the request body does not match its schema', { errors });
  }
  return value as T;
}

/** Decodes unpadded base64url, refusing non-canonical text and a wrong length. */
export function decodeBase64Url(text: string, field: string, length?: number): Uint8Array {
  const bytes = Buffer.from(text, 'base64url');
  if (bytes.toString('base64url') !== text || (length !== undefined && bytes.length !== length)) {
    throw new ApiError('VALIDATION_FAILED', `${field} is not valid base64url`,
      { errors: [{ path: `/${field}`, message: 'invalid base64url' }] });
  }
  return new Uint8Array(bytes);
}
