/**
 * The commands that install the `iki` CLI from this service (issue 12 item 2): the service
 * serves its own CLI as a self-contained npm tarball at `/downloads/iki-cli.tgz`, so these
 * work on any machine with Node.js 20+, without this repository and without the public npm
 * registry (where the name `iki` is not ours). Built from the address the user opened.
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
