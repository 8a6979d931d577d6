/**
 * Soft-decision matching of a read against the licenses issued for a master
 * (docs/watermark.md section 12): every issued license is scored against the read's 80
 * per-bit scores, and a license is named when the probability that an innocent one scores as
 * high, for the identify as a whole, is below 1e-9 (one license) or 1e-6 (the colluders of a
 * read recognised as a mix of several copies).
 */
import { callWasm } from './errors.js';
import { wasm } from './wasm.js';

/** Most issued licenses one identify scores (crates/iki-watermark `MAX_ISSUED`). */
export const MAX_ISSUED_LICENSES = 1 << 20;

/** One issued license's score against a read. */
export interface LicenseCandidate {
  /** 16 lowercase hex digits. */
  licenseId: string;
  /** The license's correlation with the read in standard deviations of an innocent one's (at most sqrt(80)). */
  score: number;
  /** Upper bound on the probability that an innocent license scores this high in this identify. */
  falseAccusation: number;
  /** Whether the license is named: falseAccusation at most 1e-9, or 1e-6 in a mix. */
  named: boolean;
}

/** What {@link matchLicenses} says. */
export interface LicenseMatch {
  /** Whether the read looks like several differently licensed copies mixed. */
  mixed: boolean;
  /** At most 5 issued licenses, highest score first. */
  candidates: LicenseCandidate[];
}

const LICENSE_ID = /^[0-9a-f]{16}$/u;

/** License ids (16 hex digits each) as the `BigUint64Array` the WASM module takes. */
export function issuedIds(ids: readonly string[]): BigUint64Array {
  if (!Array.isArray(ids)) throw new TypeError('issued must be an array of license ids');
  if (ids.length > MAX_ISSUED_LICENSES) throw new RangeError(`issued holds more than ${MAX_ISSUED_LICENSES} license ids`);
  const out = new BigUint64Array(ids.length);
  ids.forEach((id, i) => {
    if (typeof id !== 'string' || !LICENSE_ID.test(id.toLowerCase())) {
      throw new TypeError(`issued[${i}] must be a license id of 16 hex digits`);
    }
    out[i] = BigInt(`0x${id}`);
  });
  return out;
}

/**
 * Scores `issued` against a read's 80 per-bit scores (`bits` of {@link Suspect.detect} or
 * {@link Suspect.readInformed}); `tests` is how many reads of the search are scored (the
 * union bound's factor, at least 1).
 */
export function matchLicenses(bits: Float64Array, confidence: number, issued: readonly string[], tests = 1): LicenseMatch {
  if (!(bits instanceof Float64Array) || bits.length !== 80) throw new TypeError('bits must be the 80 per-bit scores of a read');
  if (typeof confidence !== 'number') throw new TypeError('confidence must be a number');
  if (typeof tests !== 'number' || !Number.isFinite(tests) || tests < 1) throw new RangeError('tests must be a number of reads, at least 1');
  const ids = issuedIds(issued);
  return callWasm(() => wasm().matchLicenses(bits, confidence, ids, tests) as LicenseMatch);
}
