import type { Request, Response } from 'express';
import type { AugmentedRequest } from 'express-rate-limit';
import { OAuthError } from '../../errors';
import { sendJsonError } from '../errors/error-handler';

/** Whole seconds until the next request is allowed; at least 1. */
export function retryAfterSeconds(req: Request, now: number, windowMs: number): number {
  const resetTime = (req as AugmentedRequest).rateLimit?.resetTime;
  return Math.max(1, Math.ceil(((resetTime?.getTime() ?? now + windowMs) - now) / 1000));
}

/**
 * The 429 as JSON even on /oauth/authorize, where a thrown error would be the error page: the spec
 * wants this JSON body on every limited endpoint.
 */
export function tooManyRequests(res: Response, seconds: number) {
  sendJsonError(
    res,
    new OAuthError('too_many_requests', `Rate limit exceeded; retry in ${seconds} seconds`, {
      headers: { 'Retry-After': String(seconds) },
    }),
  );
}

/** Hosted pages: the error middleware renders it as the styled error page (JSON for API callers). */
export function pageTooManyRequests(seconds: number): OAuthError {
  return new OAuthError('too_many_requests', `Too many requests from your network. Try again in ${seconds} seconds.`, {
    headers: { 'Retry-After': String(seconds) },
  });
}
