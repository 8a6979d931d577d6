/**
 * Account password hashing with Argon2id (RFC 9106) through `hash-wasm`.
 *
 * Cost: the default is OWASP's Argon2id option m = 19 MiB, t = 2, p = 1 rather than the
 * container's 64 MiB / 3 / 1. A password-slot guess is paid by an offline attacker, but an
 * account hash is paid by this server on every sign-in; at 64 MiB a burst of sign-ins would
 * take gigabytes. 19 MiB / 2 passes costs about 40 ms here and stays within OWASP's
 * equivalent-strength table. Hashes are PHC strings carrying their own parameters, and a hash
 * made with other parameters is replaced on the next successful sign-in, so the cost can be
 * raised in configuration without a migration. At most `maxConcurrent` hashes run at once,
 * which bounds memory at maxConcurrent × m.
 */
import { randomBytes } from 'node:crypto';
import { argon2id, argon2Verify } from 'hash-wasm';
import type { PasswordHashing } from '../config.js';

const SALT_BYTES = 16;
const HASH_BYTES = 32;

/** A counting semaphore for the expensive hash calls. */
class Gate {
  private active = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly max: number) {}

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.active >= this.max) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.active += 1;
    try {
      return await task();
    } finally {
      this.active -= 1;
      this.waiting.shift()?.();
    }
  }
}

/** Hashes and checks account passwords. */
export class PasswordHasher {
  private readonly gate: Gate;

  constructor(private readonly params: PasswordHashing, maxConcurrent = 2) {
    this.gate = new Gate(maxConcurrent);
  }

  /** A PHC-encoded Argon2id hash with a fresh random salt. */
  hash(password: string): Promise<string> {
    return this.gate.run(() => argon2id({
      password, salt: randomBytes(SALT_BYTES), hashLength: HASH_BYTES,
      memorySize: this.params.memoryKiB, iterations: this.params.iterations,
      parallelism: this.params.parallelism, outputType: 'encoded',
    }));
  }

  /** True when `password` matches `encoded`; false for a wrong password or a malformed hash. */
  verify(password: string, encoded: string): Promise<boolean> {
    return this.gate.run(() => argon2Verify({ password, hash: encoded }).catch(() => false));
  }

  /** True when `encoded` was made with other parameters than the configured ones. */
  needsRehash(encoded: string): boolean {
    const { memoryKiB: m, iterations: t, parallelism: p } = this.params;
    return !encoded.startsWith(`$argon2id$v=19$m=${m},t=${t},p=${p}$`);
  }
}
