/**
 * Account routes: sign-up, e-mail verification, sign-in and the caller's own account.
 * HTTP only: parse, validate, call `AccountService`, shape the answer.
 */
import type { AccountService } from '../services/accounts.js';
import {
  signInBody, signUpBody, verifyEmailBody, type SignInInput, type SignUpInput, type VerifyEmailInput,
} from '../schemas/requests.js';
import { validate } from '../schemas/validate.js';
import { callerOf, requireJson, type RouteDef } from './http.js';

/** The account routes. */
export function accountRoutes(accounts: AccountService, jsonLimit: number): RouteDef[] {
  return [
    {
      method: 'post', path: '/api/accounts', auth: false,
      async handler(req, res) {
        const input = validate<SignUpInput>(signUpBody, await requireJson(req, jsonLimit));
        res.status(201).json(await accounts.signUp(input));
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
        // app.ts leaves `trust proxy` at Express's default (off), so this is the TCP peer:
        // X-Forwarded-For is ignored and cannot be forged to dodge the per-client limit. A
        // socket already gone has no address; such requests share one count, not none.
        const session = await accounts.signIn(input.email, input.password, req.ip ?? 'unknown');
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
