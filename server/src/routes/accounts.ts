/**
 * Account routes: sign-up, e-mail verification and its resend, sign-in and the caller's own
 * account. HTTP only: parse, validate, call `AccountService`, shape the answer.
 */
import type { Request } from 'express';
import type { AccountService } from '../services/accounts.js';
import { clientKey } from '../services/client-address.js';
import {
  resendVerificationBody, signInBody, signUpBody, verifyEmailBody, type ResendVerificationInput, type SignInInput,
  type SignUpInput, type VerifyEmailInput,
} from '../schemas/requests.js';
import { validate } from '../schemas/validate.js';
import { callerOf, requestOrigin, requireJson, type RouteDef } from './http.js';

/** The one answer of a resend request, whatever the address: it tells nothing about accounts. */
export const RESEND_ANSWER = { status: 'sent-if-unverified' } as const;

/**
 * The client address for the per-client limits. `trust proxy` (IKI_TRUST_PROXY, off by default)
 * decides whether this is the TCP peer or a client named in X-Forwarded-For by a trusted proxy;
 * off, the header is ignored and cannot be forged to dodge a limit. IPv6 clients count by /64
 * (`clientKey`). A socket already gone has no address; such requests share one count, not none.
 */
const clientIp = (req: Request): string => clientKey(req.ip);

/** The account routes. */
export function accountRoutes(accounts: AccountService, jsonLimit: number): RouteDef[] {
  return [
    {
      method: 'post', path: '/api/accounts', auth: false,
      async handler(req, res) {
        const input = validate<SignUpInput>(signUpBody, await requireJson(req, jsonLimit));
        res.status(201).json(await accounts.signUp(input, clientIp(req), requestOrigin(req)));
      },
    },
    {
      method: 'post', path: '/api/accounts/verification', auth: false,
      async handler(req, res) {
        const input = validate<ResendVerificationInput>(resendVerificationBody, await requireJson(req, jsonLimit));
        await accounts.resendVerification(input.email, clientIp(req), requestOrigin(req));
        res.status(202).json(RESEND_ANSWER);
      },
    },
    {
      method: 'post', path: '/api/accounts/verify', auth: false,
      async handler(req, res) {
        const input = validate<VerifyEmailInput>(verifyEmailBody, await requireJson(req, jsonLimit));
        res.json(await accounts.verifyEmail(input.token));
      },
    },
    {
      method: 'post', path: '/api/sessions', auth: false,
      async handler(req, res) {
        const input = validate<SignInInput>(signInBody, await requireJson(req, jsonLimit));
        const session = await accounts.signIn(input.email, input.password, clientIp(req));
        res.status(201).json({ accessToken: session.accessToken, tokenType: 'Bearer',
          expiresIn: session.expiresIn, accountId: session.accountId });
      },
    },
    {
      method: 'get', path: '/api/me', auth: true,
      async handler(_req, res) {
        res.json(await accounts.me(callerOf(res)));
      },
    },
  ];
}
