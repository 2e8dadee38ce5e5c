import type { Request, Response } from 'express';
import type { AugmentedRequest } from 'express-rate-limit';
import { OAuthError } from '../../errors';

/** Whole seconds until the next request is allowed; at least 1. */
export function retryAfterSeconds(req: Request, now: number, windowMs: number): number {
  const resetTime = (req as AugmentedRequest).rateLimit?.resetTime;
  return Math.max(1, Math.ceil(((resetTime?.getTime() ?? now + windowMs) - now) / 1000));
}

/**
 * The 429 in the error middleware's exact JSON shape. Written here because the spec wants this
 * JSON body on every limited endpoint, /oauth/authorize included, where that middleware renders HTML.
 */
export function tooManyRequests(res: Response, seconds: number) {
  const error = new OAuthError('too_many_requests', `Rate limit exceeded; retry in ${seconds} seconds`, {
    headers: { 'Retry-After': String(seconds) },
  });
  res.status(error.status).set(error.headers).set('Cache-Control', 'no-store');
  res.json({ error: error.code, error_description: error.description });
}

/** Hosted pages: the error middleware renders it as the styled error page (JSON for API callers). */
export function pageTooManyRequests(seconds: number): OAuthError {
  return new OAuthError('too_many_requests', `Too many requests from your network. Try again in ${seconds} seconds.`, {
    headers: { 'Retry-After': String(seconds) },
  });
}
