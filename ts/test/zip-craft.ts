// A ZIP writer for tests that need archives no honest writer makes (APPNOTE 6.3.10, sections
// 4.3.7, 4.3.12, 4.3.16): sizes that lie, names that escape, encrypted flags, unknown methods,
// entries sharing their data. Good archives in the tests come from zip.js itself.
import { crc32, deflateRawSync } from 'node:zlib';

export interface CraftEntry {
  name: string;
  /** The uncompressed content. */
  content: Uint8Array;
  /** 0 stored (default), 8 deflate, or any other number as written. */
  method?: number;
  /** General purpose bit flags (bit 0: encrypted); bit 11 (UTF-8 names) is always set. */
  flags?: number;
  /** A declared uncompressed size other than the true one. */
  declaredSize?: number;
  /** Point this entry's directory record at the local header of an earlier entry. */
  sameDataAs?: number;
}

/** Little-endian fields of the given byte widths. */
function fields(...values: [number, 2 | 4][]): Uint8Array {
  const out = new Uint8Array(values.reduce((n, [, w]) => n + w, 0));
  const view = new DataView(out.buffer);
  let at = 0;
  for (const [value, width] of values) {
    if (width === 2) view.setUint16(at, value, true);
    else view.setUint32(at, value >>> 0, true);
    at += width;
  }
  return out;
}

/** The archive's bytes: local headers and data, central directory, end record. */
export function craftZip(entries: CraftEntry[]): Uint8Array {
  const local: Uint8Array[] = [];
  const central: Uint8Array[] = [];
  const offsets: number[] = [];
  let localLength = 0;
  let centralLength = 0;
  for (const e of entries) {
    const name = new TextEncoder().encode(e.name);
    const method = e.method ?? 0;
    const data = method === 8 ? new Uint8Array(deflateRawSync(e.content)) : e.content;
    const common = fields([20, 2], [(e.flags ?? 0) | 0x800, 2], [method, 2], [0, 2], [0x21, 2], [crc32(e.content), 4],
      [data.length, 4], [e.declaredSize ?? e.content.length, 4]);
    let offset = localLength;
    if (e.sameDataAs === undefined) {
      for (const part of [fields([0x04034b50, 4]), common, fields([name.length, 2], [0, 2]), name, data]) {
        local.push(part);
        localLength += part.length;
      }
    } else {
      offset = offsets[e.sameDataAs] as number;
    }
    offsets.push(offset);
    for (const part of [fields([0x02014b50, 4], [0x031e, 2]), common, fields([name.length, 2], [0, 2], [0, 2], [0, 2], [0, 2], [0, 4], [offset, 4]), name]) {
      central.push(part);
      centralLength += part.length;
    }
  }
  const end = fields([0x06054b50, 4], [0, 2], [0, 2], [entries.length, 2], [entries.length, 2], [centralLength, 4], [localLength, 4], [0, 2]);
  const out = new Uint8Array(localLength + centralLength + end.length);
  let at = 0;
  for (const part of [...local, ...central, end]) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}
