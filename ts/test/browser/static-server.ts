// A tiny localhost static server for the browser test: it serves the test
// page, ts/dist and pkg/ from the repository and nothing else, plus, when given,
// one more directory under `/extra/` (bundles a test built).
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, normalize, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const PAGE = fileURLToPath(new URL('./page.html', import.meta.url));
const SERVED_PREFIXES = [`pkg${sep}`, `ts${sep}dist${sep}`];
const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  // application/wasm lets the glue use WebAssembly.instantiateStreaming.
  '.wasm': 'application/wasm',
  '.map': 'application/json',
};

/** Maps a URL path to a file, or undefined when it is not served. */
function resolve(urlPath: string, extra: string | undefined): string | undefined {
  if (urlPath === '/' || urlPath === '/index.html') return PAGE;
  const relative = normalize(decodeURIComponent(urlPath)).replace(/^[/\\]+/, '');
  if (extra !== undefined && relative.startsWith(`extra${sep}`) && !relative.includes('..')) {
    return join(extra, relative.slice('extra/'.length));
  }
  return SERVED_PREFIXES.some((prefix) => relative.startsWith(prefix)) ? ROOT + relative : undefined;
}

export interface StaticServer {
  url: string;
  close(): Promise<void>;
}

/** Starts the server on an ephemeral 127.0.0.1 port (`extra`: a directory served at `/extra/`). */
export async function startStaticServer(extra?: string): Promise<StaticServer> {
  const server: Server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    if (path === '/favicon.ico') {
      res.writeHead(204).end();
      return;
    }
    const file = resolve(path, extra);
    if (file === undefined) {
      res.writeHead(404).end();
      return;
    }
    readFile(file).then(
      (body) => res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' }).end(body),
      () => res.writeHead(404).end(),
    );
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((done) => server.close(() => done())),
  };
}
