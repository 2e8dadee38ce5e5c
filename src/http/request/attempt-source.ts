import type { Request } from 'express';
import { ipKeyGenerator } from 'express-rate-limit';

/**
 * The source a sign-in or sign-up attempt is counted against: `req.ip` (X-Forwarded-For only as
 * far as TRUST_PROXY trusts it), IPv6 grouped by /56 as the rate limits group it.
 */
export function attemptSource(req: Pick<Request, 'ip'>): string {
  return req.ip ? ipKeyGenerator(req.ip) : 'unknown';
}

/** The hosted pages' message for a throttled attempt (one wording, kept with signInWithPassword). */
export { tooManyAttempts } from '../../services/interaction/sign-in';
