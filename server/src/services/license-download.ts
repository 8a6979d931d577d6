/**
 * Opening a license copy for its licensee (SPEC "License copy"; issue 16 items 4 and 5, issue
 * 22 item 5): the download limits, ranges and resumes, and the download event. The plumbing
 * (ETag, ranges of a stream, holding the slot) is in `license-copies.ts`; who may download is
 * `LicenseService.openCopy`'s.
 */
import { fromPortError } from '../errors.js';
import { blobOf, type License, type Master, type UsageProgress } from '../storage/repository.js';
import type { LicenseDeps } from './licenses.js';
import {
  type CopyRange, holding, licenseCopyEtag, measure, measuring, type OpenCopy, resolveRange, resume, safeFileName, slice,
  tracking,
} from './license-copies.js';
import { masterRef } from './masters.js';
import type { ClientMark } from '../storage/activity-records.js';

/** What opening a copy needs of the license service's dependencies. */
export type CopyDeps = Pick<LicenseDeps, 'repo' | 'crypto' | 'blobs' | 'now' | 'limiter' | 'service'>;

/**
 * The license copy for its licensee, within the download limits: pulls the first bytes
 * before returning, so a failure to start (for example the crypto module missing) is still
 * an ordinary error answer and counts towards no limit. The copy carries the licensee name
 * frozen in the license, so every download of it is byte-identical.
 *
 * With `range`, only those bytes are sent. The copy is a function of the license and the
 * master, so any range is produced again: the copy is made from its first chunk (its SIGN
 * covers every byte before it) and sent from the chunk holding the range's first byte,
 * stopping after the last. A range needs the copy's size; the first time it is asked for
 * one, the copy is made once to measure it, and the size is kept with the license. A range
 * starting after byte 0 is a resume when it continues a cut download the service recorded
 * (`UsageLimiter.startCopy`); how far each download got is recorded as it goes.
 */
export async function openLicenseCopy(deps: CopyDeps, callerId: string, license: License, master: Master,
  range?: CopyRange, mark?: ClientMark): Promise<OpenCopy> {
  const licenseObject = {
    id: license.id, masterId: master.id, licensee: license.licenseeId, licenseeName: license.licenseeName,
    seller: master.sellerId, issuedAt: license.issuedAt.getTime(),
  };
  const etag = licenseCopyEtag(master.sha256, license.id);
  let size = license.copyBytes;
  // A range past the end of a copy of known size is refused before anything is counted.
  if (range !== undefined && size !== undefined) resolveRange(range, size);
  // A range from a byte after the first may continue a cut download (issue 22 item 5).
  const from = range === undefined ? undefined
    : 'suffix' in range ? (size === undefined ? undefined : Math.max(0, size - range.suffix)) : range.start;
  const progress: UsageProgress = { sentTo: 0, complete: false };
  const slot = await deps.limiter.startCopy(callerId, license.id, etag, from !== undefined && from > 0 ? from : undefined,
    () => ({ ...progress }));
  const produce = () => deps.crypto.streamLicenseCopy(deps.blobs.read(blobOf(master)), masterRef(master),
    licenseObject, deps.service);
  let sent: { start: number; end: number } | undefined;
  let iterator: AsyncIterator<Uint8Array>;
  let first: IteratorResult<Uint8Array>;
  try {
    if (range !== undefined && size === undefined) {
      size = await measure(produce());
      await deps.repo.setLicenseCopyBytes(license.id, size);
    }
    let source: AsyncIterable<Uint8Array>;
    ({ source, sent } = selected(deps, license.id, produce, range, size));
    const reachesEnd = sent === undefined || (size !== undefined && sent.end === size - 1);
    iterator = tracking(source, sent?.start ?? 0, progress, reachesEnd)[Symbol.asyncIterator]();
    first = await iterator.next();
    await deps.repo.appendEvent({ at: deps.now(), kind: 'download', actorId: callerId,
      masterId: master.id, licenseId: license.id, details: sent === undefined ? {} : { range: `${sent.start}-${sent.end}` } });
    // Issue 29: counted in the license's activity, a resume apart, with the client's prefix and device.
    await deps.repo.activity.record(license.id, deps.now(), slot.resumed ? 'resume' : 'download', mark);
  } catch (err) {
    // Nothing went out: the download never began and counts towards no limit.
    await slot.cancel();
    throw fromPortError(err);
  }
  return { fileName: `${safeFileName(master.name)}.ikm`, etag,
    size, range: sent, chunks: holding(slot, resume(first, iterator)), close: () => slot.release() };
}

/**
 * The bytes to send: the range of a copy of known `size`, or the whole copy, whose size is
 * kept with the license when it was not known.
 */
function selected(deps: CopyDeps, licenseId: string, produce: () => AsyncIterable<Uint8Array>, range: CopyRange | undefined,
  size: number | undefined): { source: AsyncIterable<Uint8Array>; sent: { start: number; end: number } | undefined } {
  if (range !== undefined && size !== undefined) {
    const sent = resolveRange(range, size);
    return { source: slice(produce(), sent.start, sent.end), sent };
  }
  return { sent: undefined, source: measuring(produce(), async (bytes) => {
    if (size === undefined) await deps.repo.setLicenseCopyBytes(licenseId, bytes).catch(() => {});
  }) };
}
