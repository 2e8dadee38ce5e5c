import type { RequestHandler } from 'express';
import { safeEqual } from '../../crypto/digest';
import { randomToken } from '../../crypto/random';
import { OAuthError } from '../../errors';

/** Synchroniser token: one random value per session, required in every form POST. */
export const issueCsrf: RequestHandler = (req, res, next) => {
  req.session.csrf ??= randomToken(24);
  res.locals.csrfToken = req.session.csrf;
  next();
};

export const requireCsrf: RequestHandler = (req, _res, next) => {
  const sent = (req.body as Record<string, unknown> | undefined)?._csrf;
  if (!req.session.csrf || typeof sent !== 'string' || !safeEqual(sent, req.session.csrf)) {
    throw new OAuthError('invalid_request', 'This form has expired. Go back, reload the page and try again.', { status: 403 });
  }
  next();
};
