/**
 * Issue 15 item 13: behind a reverse proxy with `IKI_TRUST_PROXY` off, every client has the
 * proxy's address, so all of them share one per-client sign-in and mail allowance (one person
 * can lock everyone out). The first request that carries `X-Forwarded-For` while trust is off
 * logs a loud warning saying so and what to set; later ones say nothing more.
 */
import type { RequestHandler } from 'express';
import type { Logger } from '../logger.js';

/** The warning's message (tests look for it). */
export const FORWARDED_FOR_WARNING = 'X-Forwarded-For seen but IKI_TRUST_PROXY is off: every client behind this proxy '
  + 'shares one sign-in and mail limit, so one client can lock out all others. Set IKI_TRUST_PROXY to the proxy\'s '
  + 'address (or hop count) if a reverse proxy sits in front of this service.';

/** A middleware that warns once. */
export function forwardedForWarning(logger: Logger): RequestHandler {
  let warned = false;
  return (req, _res, next) => {
    if (!warned && req.get('x-forwarded-for') !== undefined) {
      warned = true;
      logger.warn(FORWARDED_FOR_WARNING, { peer: req.socket.remoteAddress ?? 'unknown' });
    }
    next();
  };
}
