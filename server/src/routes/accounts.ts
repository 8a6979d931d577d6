/**
 * Account routes: sign-up (pending until its link is used, with the proof cookie of the
 * browser that signed up), e-mail verification and its resend, password reset and change, and the caller's own account. HTTP only: parse, validate,
 * call the services, shape the answer. Sessions are in `sessions.ts`.
 */
import { randomBytes } from 'node:crypto';
import type { Request, Response } from 'express';
import type { AccountService } from '../services/accounts.js';
import { clientKey } from '../services/client-address.js';
import type { PasswordReset } from '../services/password-reset.js';
import {
  changePasswordBody, passwordResetBody, passwordResetCompleteBody, resendVerificationBody, signUpBody, verifyEmailBody,
  type ChangePasswordInput, type PasswordResetCompleteInput, type PasswordResetInput, type ResendVerificationInput,
  type SignUpInput, type VerifyEmailInput,
} from '../schemas/requests.js';
import { validate } from '../schemas/validate.js';
import { callerOf, requireJson, sessionOf, type RouteDef } from './http.js';

/** The one answer of a resend request, whatever the address: it tells nothing about accounts. */
export const RESEND_ANSWER = { status: 'sent-if-unverified' } as const;
/** The answer of a completed reset or change. */
export const PASSWORD_CHANGED = { status: 'password-changed' } as const;

/**
 * The client address for the per-client limits. `trust proxy` (IKI_TRUST_PROXY, off by default)
 * decides whether this is the TCP peer or a client named in X-Forwarded-For by a trusted proxy;
 * off, the header is ignored and cannot be forged to dodge a limit. IPv6 clients count by /64
 * (`clientKey`). A socket already gone has no address; such requests share one count, not none.
 */
export const clientIp = (req: Request): string => clientKey(req.ip);

/**
 * The sign-up proof cookie (issue 22 item 3): 32 random bytes the browser that signed up keeps
 * (`HttpOnly; Secure; SameSite=Strict`, sent only to the verify route), of which the pending
 * sign-up stores the SHA-256. The link completes with the sign-up's password only when it
 * comes back with this cookie; a link opened in any other browser asks for a password there.
 * Every sign-up answer sets one, whatever the address, so the cookie tells nothing either.
 */
export const SIGN_UP_COOKIE = 'iki_sign_up';
const SIGN_UP_COOKIE_PATH = '/api/accounts/verify';

function setSignUpCookie(res: Response, value: string, maxAgeSeconds: number): void {
  res.append('Set-Cookie', `${SIGN_UP_COOKIE}=${value}; Path=${SIGN_UP_COOKIE_PATH}; Max-Age=${maxAgeSeconds}; HttpOnly; Secure; SameSite=Strict`);
}

/** The value of cookie `name` when the request has a well-formed one. */
export function cookieValue(req: Request, name: string): string | undefined {
  for (const part of (req.get('cookie') ?? '').split(';')) {
    const [key, ...rest] = part.trim().split('=');
    const value = rest.join('=');
    if (key === name && /^[A-Za-z0-9_-]{43}$/.test(value)) return value;
  }
  return undefined;
}

/** The account routes. */
export function accountRoutes(accounts: AccountService, reset: PasswordReset, jsonLimit: number): RouteDef[] {
  return [
    {
      method: 'post', path: '/api/accounts', auth: false,
      async handler(req, res) {
        const input = validate<SignUpInput>(signUpBody, await requireJson(req, jsonLimit));
        const proof = randomBytes(32).toString('base64url');
        const answer = await accounts.signUp(input, clientIp(req), proof);
        setSignUpCookie(res, proof, accounts.signUpProofSeconds);
        res.status(202).json(answer);
      },
    },
    {
      method: 'post', path: '/api/accounts/verification', auth: false,
      async handler(req, res) {
        const input = validate<ResendVerificationInput>(resendVerificationBody, await requireJson(req, jsonLimit));
        await accounts.resendVerification(input.email, clientIp(req));
        res.status(202).json(RESEND_ANSWER);
      },
    },
    {
      method: 'post', path: '/api/accounts/verify', auth: false,
      async handler(req, res) {
        const input = validate<VerifyEmailInput>(verifyEmailBody, await requireJson(req, jsonLimit));
        const account = await accounts.verifyEmail(input.token, { proof: cookieValue(req, SIGN_UP_COOKIE), password: input.password });
        setSignUpCookie(res, '', 0);
        res.json(account);
      },
    },
    {
      method: 'post', path: '/api/accounts/password-reset', auth: false,
      async handler(req, res) {
        const input = validate<PasswordResetInput>(passwordResetBody, await requireJson(req, jsonLimit));
        res.status(202).json(await reset.request(input.email, clientIp(req)));
      },
    },
    {
      method: 'post', path: '/api/accounts/password-reset/complete', auth: false,
      async handler(req, res) {
        const input = validate<PasswordResetCompleteInput>(passwordResetCompleteBody, await requireJson(req, jsonLimit));
        await reset.complete(input.token, input.password);
        res.json(PASSWORD_CHANGED);
      },
    },
    {
      method: 'get', path: '/api/me', auth: true, allowUnverified: true,
      async handler(_req, res) {
        res.json(await accounts.me(callerOf(res)));
      },
    },
    {
      method: 'post', path: '/api/me/password', auth: true,
      async handler(req, res) {
        const input = validate<ChangePasswordInput>(changePasswordBody, await requireJson(req, jsonLimit));
        await accounts.changePassword({ accountId: callerOf(res), sessionId: sessionOf(res) }, input.currentPassword,
          input.newPassword, clientIp(req));
        res.json(PASSWORD_CHANGED);
      },
    },
  ];
}
