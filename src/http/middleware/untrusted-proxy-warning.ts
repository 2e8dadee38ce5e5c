import type { RequestHandler } from 'express';
import type { Logger } from 'pino';
import type { Config } from '../../config';

/**
 * A request carrying X-Forwarded-For while TRUST_PROXY trusts no proxy means the provider most
 * likely sits behind one it ignores: every user then has the proxy's address as source, so rate
 * limits and sign-in throttling count them all as one. Said once per app (one per process).
 */
export function untrustedProxyWarning(trustProxy: Config['trustProxy'], logger: Logger): RequestHandler {
  const pass: RequestHandler = (_req, _res, next) => next();
  if (trustProxy !== false && trustProxy !== 0) return pass;
  let warned = false;
  return (req, _res, next) => {
    if (!warned && req.headers['x-forwarded-for'] !== undefined) {
      warned = true;
      // The proxy's own address only: the forwarded addresses are the users'.
      logger.warn(
        { proxyAddress: req.socket.remoteAddress },
        "Requests carry X-Forwarded-For but TRUST_PROXY is not set: every user shares the proxy's source address, so rate limits and sign-in throttling count them all as one, and one locked source locks everyone out. Set TRUST_PROXY to the proxy hop count or subnet (e.g. TRUST_PROXY=1).",
      );
    }
    next();
  };
}
