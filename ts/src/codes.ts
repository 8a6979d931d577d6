// Temporary stand-in: `make gen` (crates/iki-format/examples/gen_ts.rs)
// generates this file from iki-format's error codes and overwrites it.
// Until then it lists the codes of docs/format.md section 11.
export const ERROR_CODES = [
  'BAD_MAGIC',
  'WRONG_KIND',
  'UNSUPPORTED_VERSION',
  'TRUNCATED',
  'TRAILING_BYTES',
  'LIMIT_EXCEEDED',
  'CHUNK_ORDER',
  'UNKNOWN_CRITICAL_CHUNK',
  'MALFORMED_CHUNK',
  'UNSUPPORTED_ALGORITHM',
  'BAD_MANIFEST',
  'DATA_SEQUENCE',
  'BAD_DATA',
  'HASH_MISMATCH',
  'DECRYPT_FAILED',
  'BAD_SIGNATURE',
  'BAD_CERTIFICATE',
  'KEY_REQUIRED',
  'KDF_PARAMS_REFUSED',
  'WEAK_KEY',
  'INVALID_ARGUMENT',
  'INVALID_STATE',
  'INTERNAL',
] as const;
export type IkiErrorCode = (typeof ERROR_CODES)[number];
