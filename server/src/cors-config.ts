/**
 * `IKI_CORS_ORIGINS` (issue 25 item 4): the origins of apps on other sites that may call the
 * API with bearer tokens, read by `config.ts` with its validating reader. Same-origin is the
 * default and needs nothing; the middleware is `routes/cors.ts`. Documented in server/README.md.
 */

/** Most origins the list may hold (each request compares its Origin with the list). */
export const MAX_CORS_ORIGINS = 64;

/** What `readCorsOrigins` needs of config.ts's reader. */
export interface CorsReader {
  str(name: string): string | undefined;
  problem(text: string): void;
}

/**
 * An origin exactly as a browser sends it in `Origin` (RFC 6454 section 6.1): `http` or
 * `https`, a host, an optional port, nothing else; the serialisation URL gives it.
 */
function canonicalOrigin(raw: string): string | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return undefined;
  }
  if (!/^https?:$/.test(url.protocol) || url.username !== '' || url.password !== '' || url.search !== ''
    || url.hash !== '' || (url.pathname !== '/' && url.pathname !== '') || raw.endsWith('/')) return undefined;
  return url.origin === raw ? raw : undefined;
}

/** The allowlist: comma-separated origins, none by default. `*` is refused: bearer tokens are not for everyone. */
export function readCorsOrigins(r: CorsReader): string[] {
  const raw = r.str('IKI_CORS_ORIGINS');
  if (raw === undefined || raw.trim() === '') return [];
  const items = raw.split(',').map((s) => s.trim()).filter((s) => s !== '');
  const origins = items.map(canonicalOrigin);
  if (origins.some((o) => o === undefined)) {
    r.problem('IKI_CORS_ORIGINS must be a comma-separated list of origins such as https://app.example or '
      + 'http://localhost:5173 (scheme, host and port only, no path, no trailing slash, no *)');
    return [];
  }
  if (origins.length > MAX_CORS_ORIGINS) {
    r.problem(`IKI_CORS_ORIGINS may list at most ${MAX_CORS_ORIGINS} origins`);
    return [];
  }
  return [...new Set(origins as string[])];
}
