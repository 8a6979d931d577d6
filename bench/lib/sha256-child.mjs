// @ts-check
/**
 * Child process of the SHA-256 case: node:crypto started with OPENSSL_ia32cap masking the
 * SHA extensions (x86 SHA-NI), i.e. OpenSSL's best native code without SHA instructions,
 * which WebAssembly does not have either. Reads the case's data from the file named in
 * argv, then answers each message by hashing it in 1 MiB updates and sending the digest.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';

const PIECE = 1 << 20;
const data = readFileSync(process.argv[2] ?? '');
process.on('message', () => {
  const h = createHash('sha256');
  for (let at = 0; at < data.length; at += PIECE) h.update(data.subarray(at, at + PIECE));
  process.send?.(h.digest('hex'));
});
process.send?.('ready');
