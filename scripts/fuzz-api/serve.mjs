// The service under `make fuzz-api`: serve() from server/dist with the real WebAssembly crypto
// on PGlite (default) or on a throwaway PostgreSQL started from Debian's binaries
// (`--engine postgres`), with every per-client limit raised so the fuzzer is not throttled into
// seeing only 429s. It then makes the resources the fuzzer's requests can reach: a verified
// seller with a registered signing key, a master (with its recipient slot for this service)
// and a license of it for the seller's own account, so that one token reaches the seller's
// and the licensee's operations alike. It writes what the fuzzer needs to `--out` as JSON and
// serves until SIGTERM or SIGINT, then stops PostgreSQL and removes its folders.
//
//   node scripts/fuzz-api/serve.mjs --engine pglite --out target/fuzz-api/pglite.json
import { execFileSync } from 'node:child_process';
import { createHash, generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { collect, fromBase64Url, loadWasm, SigningKey, writeContainer } from '../../ts/dist/index.js';
import { serve } from '../../server/dist/main.js';

const { values } = parseArgs({ options: { engine: { type: 'string', default: 'pglite' }, out: { type: 'string' } } });
/** The newest Debian PostgreSQL server binaries (/usr/lib/postgresql/<major>/bin), or undefined. */
const PG_BIN = (() => {
  const root = '/usr/lib/postgresql';
  const majors = existsSync(root) ? readdirSync(root).filter((v) => /^\d+$/.test(v) && existsSync(`${root}/${v}/bin/initdb`)) : [];
  return majors.length === 0 ? undefined : `${root}/${majors.sort((a, b) => Number(b) - Number(a))[0]}/bin`;
})();
const cleanups = [];

function asPostgres(command, args) {
  const root = process.getuid?.() === 0;
  execFileSync(root ? 'runuser' : command, root ? ['-u', 'postgres', '--', command, ...args] : args, { stdio: 'pipe' });
}

async function freePort() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** A throwaway PostgreSQL on 127.0.0.1; returns its URL. */
async function startPostgres() {
  if (PG_BIN === undefined) throw new Error('no PostgreSQL server binaries under /usr/lib/postgresql/*/bin (apt-get install postgresql)');
  const dir = mkdtempSync(join(tmpdir(), 'iki-fuzz-pg-'));
  if (process.getuid?.() === 0) chownSync(dir, Number(execFileSync('id', ['-u', 'postgres'])), Number(execFileSync('id', ['-g', 'postgres'])));
  const data = join(dir, 'data');
  const port = await freePort();
  asPostgres(`${PG_BIN}/initdb`, ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8']);
  asPostgres(`${PG_BIN}/pg_ctl`, ['-D', data, '-w', '-l', join(dir, 'log'), '-o',
    `-c listen_addresses=127.0.0.1 -p ${port} -k ${dir} -c fsync=off`, 'start']);
  cleanups.push(() => {
    try {
      asPostgres(`${PG_BIN}/pg_ctl`, ['-D', data, '-w', '-m', 'immediate', 'stop']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
  return `postgres://postgres@127.0.0.1:${port}/postgres`;
}

const links = new Map();
const logger = {
  info(message, fields = {}) {
    if (typeof fields.link === 'string') links.set(fields.to, fields.link);
  },
  warn() {},
  error(message, fields = {}) {
    // Unexpected errors are what the fuzzer hunts: keep them on stderr for the report.
    process.stderr.write(`${JSON.stringify({ level: 'error', message, ...fields }, (_k, v) => (v instanceof Error ? v.stack : v))}\n`);
  },
};

const dataDir = mkdtempSync(join(tmpdir(), 'iki-fuzz-data-'));
cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
const env = {
  IKI_SIGN_IN_FAILURES_PER_ADDRESS: '10000', IKI_SIGN_IN_FAILURES_PER_IP: '1000000',
  IKI_SIGN_INS_PER_ADDRESS: '100000', IKI_SIGN_INS_PER_IP: '10000000',
  IKI_VERIFICATION_MAILS_PER_ADDRESS: '1000', IKI_MAILS_PER_IP: '1000000',
  IKI_RELEASES_PER_LICENSE_PER_HOUR: '100000', IKI_RELEASES_PER_USER_PER_HOUR: '100000',
  IKI_COPIES_PER_LICENSE: '100000', IKI_COPIES_PER_USER: '1000000', IKI_CONCURRENT_COPIES_PER_LICENSE: '100',
  IKI_CONCURRENT_COPIES_PER_USER: '1000', IKI_CONCURRENT_UPLOADS_PER_ACCOUNT: '100', IKI_IDENTIFY_PER_SELLER: '100000',
  IKI_ACCESS_TOKEN_TTL_SECONDS: '86400',
};
if (values.engine === 'postgres') {
  Object.assign(env, { DATABASE_URL: await startPostgres(), IKI_ROOT_SECRET: randomBytes(32).toString('base64url'),
    IKI_PUBLIC_URL: 'http://iki.test', IKI_BLOB_STORE: 'postgres' });
} else if (values.engine !== 'pglite') {
  throw new Error(`--engine must be pglite or postgres, not ${values.engine}`);
}
const running = await serve({ port: 0, dataDir, env, logger, config: { passwordHashing: { memoryKiB: 256, iterations: 1, parallelism: 1 } } });

async function call(method, path, { token, json, body, type } = {}) {
  const headers = {};
  if (token !== undefined) headers.authorization = `Bearer ${token}`;
  if (json !== undefined) headers['content-type'] = 'application/json';
  if (type !== undefined) headers['content-type'] = type;
  const response = await fetch(`${running.url}${path}`, { method, headers, body: json === undefined ? body : JSON.stringify(json) });
  const answer = await response.json();
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(answer)}`);
  return answer;
}

async function verifiedUser(name) {
  const email = `${name}-${randomBytes(4).toString('hex')}@example.com`;
  const password = 'correct horse battery staple';
  await call('POST', '/api/accounts', { json: { email, password, name } }); // 202: pending until the link is used
  await call('POST', '/api/accounts/verify', { json: { token: new URL(links.get(email)).searchParams.get('token'), password } });
  const session = await call('POST', '/api/sessions', { json: { email, password } });
  return { email, token: session.accessToken, accountId: session.accountId };
}

await loadWasm();
const seller = await verifiedUser('seller');
const device = generateKeyPairSync('ed25519');
const seed = device.privateKey.export({ format: 'der', type: 'pkcs8' }).subarray(16);
const publicKey = device.publicKey.export({ format: 'der', type: 'spki' }).subarray(12).toString('base64url');
const proof = sign(null, Buffer.from(`IKI-KEY-REGISTRATION-V1\0${seller.accountId}`), device.privateKey).toString('base64url');
const registered = await call('POST', '/api/keys/signing', { token: seller.token, json: { publicKey, proof, name: 'fuzz' } });
const serviceKeys = await call('GET', '/api/keys/service');
const signingKey = SigningKey.fromSeed(new Uint8Array(seed));
const json = new TextEncoder().encode('{"Version":3}');
const rgba = new Uint8Array(64 * 64 * 4).fill(180);
const sha256 = (data) => createHash('sha256').update(data).digest('hex');
const master = await collect(writeContainer([
  { path: 'fuzz.model3.json', type: 'application/json', encoding: 'deflate', data: json, size: json.length, sha256: sha256(json) },
  { path: 'texture_00.png', type: 'image/x-rgba8', encoding: 'rgba8', data: rgba, size: rgba.length, sha256: sha256(rgba),
    meta: { kind: 'texture', width: 64, height: 64, source: 'image/png' } },
], { kind: 'model', signingKey, signer: { kind: 'account', account: seller.accountId, certificate: registered.certificate },
  meta: { format: 'iki-model', version: 1, name: 'Fuzz', role: 'master' },
  protection: { recipients: [fromBase64Url(serviceKeys.x25519PublicKey, 32)] } }));
signingKey.free();
const uploaded = await call('POST', '/api/licenses/masters', { token: seller.token, type: 'application/vnd.iki.model', body: master });
const license = await call('POST', `/api/licenses/masters/${uploaded.masterId}/licenses`, { token: seller.token, json: { accountId: seller.accountId } });

const state = { url: running.url, engine: values.engine, token: seller.token, accountId: seller.accountId,
  masterId: uploaded.masterId, licenseId: license.licenseId, publicKey };
if (values.out !== undefined) writeFileSync(values.out, `${JSON.stringify(state, null, 2)}\n`);
else process.stdout.write(`${JSON.stringify(state)}\n`);

async function stop() {
  await running.close();
  for (const cleanup of cleanups.reverse()) cleanup();
  process.exit(0);
}
process.on('SIGTERM', stop).on('SIGINT', stop);
