/**
 * Key-service routes: the service's public keys, device signing keys (register with a
 * certificate, public status, revoke) and account slots (wrap, unwrap). HTTP only.
 */
import type { KeyService } from '../services/keys.js';
import {
  registerSigningKeyBody, unwrapBody, wrapBody,
  type RegisterSigningKeyInput, type UnwrapInput, type WrapInput,
} from '../schemas/requests.js';
import { decodeBase64Url, validate } from '../schemas/validate.js';
import { KEY32_PATTERN } from '../services/ids.js';
import type { SealedKey } from '../services/crypto-port.js';
import { callerOf, param, requireJson, type RouteDef } from './http.js';

const KEY32 = new RegExp(KEY32_PATTERN);
const b64 = (bytes: Uint8Array): string => Buffer.from(bytes).toString('base64url');

function sealedView(sealed: SealedKey): Record<string, string> {
  return {
    algorithm: 'X25519-HKDF-SHA256-XChaCha20Poly1305', ephemeralPublicKey: b64(sealed.ephemeralPublicKey),
    nonce: b64(sealed.nonce), sealedKey: b64(sealed.ciphertext),
  };
}

/** The key-service routes. */
export function keyRoutes(keys: KeyService, jsonLimit: number, service: string): RouteDef[] {
  const publicKey = (req: Parameters<RouteDef['handler']>[0]) => param(req, 'publicKey', KEY32, 'SIGNING_KEY_NOT_FOUND');
  return [
    {
      method: 'get', path: '/api/keys/service', auth: false,
      async handler(_req, res) {
        res.setHeader('Cache-Control', 'public, max-age=300');
        res.json({ service, ...keys.servicePublicKeys() });
      },
    },
    {
      method: 'post', path: '/api/keys/signing', auth: true,
      async handler(req, res) {
        const input = validate<RegisterSigningKeyInput>(registerSigningKeyBody, await requireJson(req, jsonLimit));
        const result = await keys.register(callerOf(res), decodeBase64Url(input.publicKey, 'publicKey', 32),
          decodeBase64Url(input.proof, 'proof', 64), input.name ?? '');
        res.status(result.created ? 201 : 200).json({ ...result.key, certificate: result.certificate });
      },
    },
    {
      method: 'get', path: '/api/keys/signing', auth: true,
      async handler(_req, res) {
        res.json({ keys: await keys.list(callerOf(res)) });
      },
    },
    {
      method: 'get', path: '/api/keys/signing/{publicKey}', auth: false,
      async handler(req, res) {
        res.setHeader('Cache-Control', 'no-cache');
        res.json(await keys.status(publicKey(req)));
      },
    },
    {
      method: 'post', path: '/api/keys/signing/{publicKey}/revoke', auth: true,
      async handler(req, res) {
        res.json(await keys.revoke(callerOf(res), publicKey(req)));
      },
    },
    {
      method: 'post', path: '/api/keys/wrap', auth: true,
      async handler(req, res) {
        const input = validate<WrapInput>(wrapBody, await requireJson(req, jsonLimit));
        const caller = callerOf(res);
        const blob = await keys.wrap(caller, {
          ephemeralPublicKey: decodeBase64Url(input.ephemeralPublicKey, 'ephemeralPublicKey', 32),
          nonce: decodeBase64Url(input.nonce, 'nonce', 24),
          ciphertext: decodeBase64Url(input.sealedKey, 'sealedKey', 48),
        });
        res.json({ accountId: caller, blob });
      },
    },
    {
      method: 'post', path: '/api/keys/unwrap', auth: true,
      async handler(req, res) {
        const input = validate<UnwrapInput>(unwrapBody, await requireJson(req, jsonLimit));
        const sealed = await keys.unwrap(callerOf(res), input.accountId, decodeBase64Url(input.blob, 'blob'),
          decodeBase64Url(input.publicKey, 'publicKey', 32));
        res.setHeader('Cache-Control', 'no-store');
        res.json(sealedView(sealed));
      },
    },
  ];
}
