import type { Response } from 'express';
import { OAuthError } from '../../errors';
import { sendJsonError } from '../errors/error-handler';

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
