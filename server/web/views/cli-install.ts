/**
 * The commands that install the `iki` CLI from this service (issue 12 item 2): the service
 * serves its own CLI as a self-contained npm tarball at `/downloads/iki-cli.tgz`, so these
 * work on any machine with Node.js 20+, without this repository and without the public npm
 * registry (where the name `iki` is not ours). Built from the address the user opened.
 * Issue 22 item 11: the page also shows the tarball's SHA-256 and a command that checks the
 * download against it before installing (`sha256sum -c`, or `shasum -a 256 -c` on macOS).
 */

/** The tarball's URL on this service. */
export function cliTarballUrl(origin: string = location.origin): string {
  return `${origin}/downloads/iki-cli.tgz`;
}

/** `npm install -g <service>/downloads/iki-cli.tgz`. */
export function cliInstallCommand(origin?: string): string {
  return `npm install -g ${cliTarballUrl(origin)}`;
}

/** The one-off form without installing: `npx --package=<url> iki <args>`. */
export function cliNpxCommand(args: string, origin?: string): string {
  return `npx --yes --package=${cliTarballUrl(origin)} iki ${args}`;
}

/**
 * The tarball's SHA-256 (lowercase hex) as the service states it in the download's `ETag`, or
 * undefined when the service has no tarball built. A HEAD request: nothing is downloaded.
 */
export async function cliTarballSha256(origin: string = location.origin): Promise<string | undefined> {
  try {
    const response = await fetch(cliTarballUrl(origin), { method: 'HEAD', cache: 'no-store', credentials: 'omit' });
    return response.ok ? /^"([0-9a-f]{64})"$/.exec(response.headers.get('etag') ?? '')?.[1] : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Downloads the tarball, checks it against `sha256` and installs the checked file only:
 * `curl … && echo '<sha256>  iki-cli.tgz' | sha256sum -c - && npm install -g ./iki-cli.tgz`.
 */
export function cliCheckedInstallCommand(sha256: string, origin?: string): string {
  return `curl -fsSL -o iki-cli.tgz ${cliTarballUrl(origin)} && echo '${sha256}  iki-cli.tgz' | sha256sum -c - `
    + '&& npm install -g ./iki-cli.tgz';
}
