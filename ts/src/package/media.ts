/**
 * Media types of packaged files by name, and which encoding suits them: files that are
 * already compressed are `stored` (deflating them again costs time and gains nothing), the
 * rest `deflate`. Model packages use `deflate` for every file whatever this says
 * (docs/format.md section 5.2).
 */

const TYPES: Record<string, string> = {
  json: 'application/json', txt: 'text/plain', md: 'text/markdown', csv: 'text/csv', xml: 'application/xml',
  svg: 'image/svg+xml', png: 'image/png', jpg: 'image/jpeg', jpeg: 'image/jpeg', webp: 'image/webp',
  gif: 'image/gif', avif: 'image/avif', bmp: 'image/bmp', psd: 'image/vnd.adobe.photoshop',
  wav: 'audio/wav', mp3: 'audio/mpeg', ogg: 'audio/ogg', m4a: 'audio/mp4', flac: 'audio/flac',
  mp4: 'video/mp4', webm: 'video/webm', ttf: 'font/ttf', otf: 'font/otf', woff: 'font/woff', woff2: 'font/woff2',
  zip: 'application/zip', moc3: 'application/octet-stream',
};

/** Types whose bytes are already compressed. */
const COMPRESSED = new Set([
  'image/png', 'image/jpeg', 'image/webp', 'image/gif', 'image/avif', 'audio/mpeg', 'audio/ogg', 'audio/mp4',
  'audio/flac', 'video/mp4', 'video/webm', 'font/woff', 'font/woff2', 'application/zip',
]);

/** The media type of a file, from its extension; `application/octet-stream` when unknown. */
export function mediaTypeOf(path: string): string {
  const dot = path.lastIndexOf('.');
  const slash = path.lastIndexOf('/');
  if (dot <= slash + 1) return 'application/octet-stream';
  return TYPES[path.slice(dot + 1).toLowerCase()] ?? 'application/octet-stream';
}

/** `stored` for already-compressed media types, `deflate` for the rest. */
export function encodingFor(type: string): 'stored' | 'deflate' {
  return COMPRESSED.has(type) ? 'stored' : 'deflate';
}
