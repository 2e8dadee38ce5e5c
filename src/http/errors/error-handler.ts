import type { ErrorRequestHandler, Request, Response } from 'express';
import type { Logger } from 'pino';
import type { OAuthError } from '../../errors';
import { isHostedPagePath, pathOfTarget, rootFormOf } from '../surface';
import { renderErrorPage } from './error-page';
import { isInvalidInput, toOAuthError } from './to-oauth-error';

/** The one error middleware: logs what was thrown, then answers it with sendError. */
export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (err, req, res, next) => {
    const error = toOAuthError(err);
    logError(logger, req, error);
    if (res.headersSent) return next(err);
    sendError(req, res, error);
  };
}

/**
 * An error's answer: its status and headers, `no-store`, and the body its surface wants: the
 * error page on a hosted page (wantsHtml), else the JSON shape. For errors answered without
 * throwing (the handler logs what is thrown; a failed readiness probe is not worth a log line).
 */
export function sendError(req: Request, res: Response, error: OAuthError): void {
  if (wantsHtml(req)) {
    setErrorHeaders(res, error);
    return renderErrorPage(req, res, error);
  }
  sendJsonError(res, error);
}

/**
 * The JSON shape whatever the path: for answers a page's script reads (passkey options), and the
 * rate limiter's 429, which is JSON on every limited endpoint, /oauth/authorize included.
 */
export function sendJsonError(res: Response, error: OAuthError): void {
  setErrorHeaders(res, error);
  res.json(errorBody(error));
}

/** The spec's error body (RFC 6749 §5.2): what every JSON error says, Node's own refusals included (client-error.ts). */
export function errorBody(error: Pick<OAuthError, 'code' | 'description'>): {
  error: string;
  error_description: string;
} {
  return { error: error.code, error_description: error.description };
}

function setErrorHeaders(res: Response, error: OAuthError): void {
  res.status(error.status).set(error.headers).set('Cache-Control', 'no-store');
}

function logError(logger: Logger, req: Request, error: OAuthError) {
  const base = { reqId: req.id, code: error.code, status: error.status, path: req.path };
  const cause = error.cause as { message?: string; stack?: string; code?: string } | undefined;
  if (error.status >= 500) {
    logger.error(
      { ...base, cause: { message: cause?.message, code: cause?.code, stack: cause?.stack } },
      error.description,
    );
  } else if (isInvalidInput(cause)) {
    // A missed input check, not an outage: the SQLSTATE and route point at it. No stack, and no
    // message either: Postgres quotes the refused value (it may be a password or a token).
    logger.warn({ ...base, sqlState: cause!.code }, 'the database refused a value from the request');
  } else {
    logger.debug(base, error.description);
  }
}

/**
 * The error page only on a hosted page (http/surface.ts), decided by the path: an API path answers
 * JSON even to a browser. On a hosted page, authorize and logout always answer the page (the spec's
 * HTML error); elsewhere a page's own script asking for JSON gets JSON.
 */
function wantsHtml(req: Request): boolean {
  const path = rootFormOf(pathOfTarget(req.originalUrl).toLowerCase());
  if (!isHostedPagePath(path)) return false;
  if (path === '/oauth/authorize' || path.startsWith('/oauth/logout')) return true;
  return req.accepts(['json', 'html']) === 'html';
}
