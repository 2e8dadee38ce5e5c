import type { ErrorRequestHandler, Express, Request, Response } from 'express';
import type { Logger } from 'pino';
import { localeOfRequest, useLocale } from './http/middleware/locale';
import { renderPage } from './http/pages/render';
import { translatorFor } from './i18n/catalogs';
import { isHostedPagePath, pathOfTarget } from './http/surface';

export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'invalid_scope'
  | 'invalid_token'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'unsupported_response_type'
  | 'unsupported_token_type'
  | 'access_denied'
  | 'login_required'
  | 'consent_required'
  | 'interaction_required'
  | 'account_selection_required'
  | 'request_not_supported'
  | 'request_uri_not_supported'
  | 'not_found'
  | 'too_many_requests'
  | 'temporarily_unavailable'
  | 'server_error';

// DESIGN §7: statuses per RFC 6749/6750/7009/7662.
const STATUS: Partial<Record<OAuthErrorCode, number>> = {
  invalid_client: 401,
  invalid_token: 401,
  not_found: 404,
  too_many_requests: 429,
  server_error: 500,
  temporarily_unavailable: 503,
};

export interface OAuthErrorOptions {
  status?: number;
  headers?: Record<string, string>;
  cause?: unknown;
  /**
   * The error page's message as a catalog key (`errors:page.expired`), for errors people meet in
   * the browser; without it the page shows a translated generic message and the (English) description.
   */
  pageMessage?: string;
  /** A known, registered page of the app to go back to (Client.clientUri), never a request's redirect_uri. */
  app?: { name: string; url: string };
}

/** The one error type. `code` is the wire code; `cause` is logged, never sent. */
export class OAuthError extends Error {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly pageMessage?: string;
  readonly app?: { name: string; url: string };

  constructor(
    readonly code: OAuthErrorCode,
    readonly description: string,
    options: OAuthErrorOptions = {},
  ) {
    super(`${code}: ${description}`, { cause: options.cause });
    this.status = options.status ?? STATUS[code] ?? 400;
    this.headers = options.headers ?? {};
    this.pageMessage = options.pageMessage;
    this.app = options.app;
  }
}

export const invalidRequest = (d: string) => new OAuthError('invalid_request', d);
export const invalidGrant = (d: string) => new OAuthError('invalid_grant', d);
export const invalidToken = (d: string) =>
  new OAuthError('invalid_token', d, {
    headers: { 'WWW-Authenticate': `Bearer error="invalid_token", error_description="${d.replace(/"/g, "'")}"` },
  });

// Socket errors, and SQLSTATE classes 08 (connection exception), 57P (shutdown, cannot connect now), 53300 (too many connections),
// 57014 (statement cancelled: DB_STATEMENT_TIMEOUT_MS ran out on an overloaded database).
const DATABASE_UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN',
  '57P01', '57P02', '57P03', '53300', '08000', '08001', '08003', '08004', '08006', '57014',
]);

/** pg error codes that mean "the database is not there right now". */
function isDatabaseUnavailable(err: unknown): boolean {
  const e = err as { code?: string; message?: string } | undefined;
  if (!e) return false;
  if (e.code && DATABASE_UNAVAILABLE_CODES.has(e.code)) return true;
  // pg and knex: a dead or closed connection, a connect timeout ("timeout expired"), a full pool,
  // the client-side statement timeout (through PgBouncer, on PGlite: "Query read timeout")
  return /Knex: Timeout acquiring a connection|Connection terminated|connect ECONNREFUSED|not queryable|^timeout expired$|^Query read timeout$/.test(e.message ?? '');
}

/**
 * SQLSTATE class 22 (data exception: 22P02 invalid text representation, 22007/22008 datetime,
 * 22001 string too long, 22003 numeric out of range, 22021 bad encoding or NUL byte, …): Postgres
 * refused a value the request supplied. Identifiers are checked before any query (src/domain/ids.ts);
 * this is the net for a check that was missed, so bad input stays a 400, never a 500.
 */
function isInvalidInput(err: unknown): boolean {
  const code = (err as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && /^22[0-9A-Z]{3}$/.test(code);
}

/** Maps anything thrown into an OAuthError; non-OAuth errors are bugs or outages. */
export function toOAuthError(err: unknown): OAuthError {
  if (err instanceof OAuthError) return err;
  const e = err as { type?: string; status?: number; statusCode?: number };
  // body-parser errors: malformed or oversized bodies are the client's mistake
  if (e?.type === 'entity.parse.failed' || e?.type === 'encoding.unsupported' || e?.type === 'charset.unsupported') {
    return new OAuthError('invalid_request', 'The request body could not be parsed', { cause: err });
  }
  if (e?.type === 'entity.too.large') return new OAuthError('invalid_request', 'The request body is too large', { status: 413, cause: err });
  if (e?.type === 'parameters.too.many') return new OAuthError('invalid_request', 'Too many parameters', { status: 413, cause: err });
  if (e && (e.status === 400 || e.statusCode === 400)) return new OAuthError('invalid_request', 'Malformed request', { cause: err });
  if (isInvalidInput(err)) return new OAuthError('invalid_request', 'A parameter has a value this server cannot accept', { cause: err });
  if (isDatabaseUnavailable(err)) {
    return new OAuthError('temporarily_unavailable', 'The service is temporarily unavailable, try again shortly', {
      headers: { 'Retry-After': '5' },
      cause: err,
    });
  }
  return new OAuthError('server_error', 'An unexpected error occurred', { cause: err });
}

/** The one error middleware: JSON in the spec's format, or the error page for browser routes. */
export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (err, req, res, next) => {
    const error = toOAuthError(err);
    logError(logger, req, error);
    if (res.headersSent) return next(err);
    res.status(error.status).set(error.headers).set('Cache-Control', 'no-store');
    if (wantsHtml(req)) return renderErrorPage(req, res, error);
    res.json({ error: error.code, error_description: error.description });
  };
}

/** The catalog key of the page message of errors that always read the same (or error.pageMessage). */
function pageMessageOf(error: OAuthError): string | undefined {
  if (error.pageMessage) return error.pageMessage;
  if (error.code === 'too_many_requests') return 'errors:page.tooManyRequests';
  if (error.code === 'temporarily_unavailable') return 'errors:page.unavailable';
  if (error.code === 'not_found') return 'errors:notFound.message';
  if (error.status >= 500) return 'errors:message.server';
  return undefined;
}

/** The English description as a detail, for whoever debugs the app: unless it says only what the message says. */
function showsDetail(error: OAuthError, key: string | undefined, seconds: number): boolean {
  if (error.status >= 500 || error.code === 'not_found') return false; // generic texts, or the path the page already names
  return !key || translatorFor('en')(key, { count: seconds }) !== error.description;
}

/** Only an http(s) URL may become the "Back to …" link (a javascript: URL would run on click). */
const isWebUrl = (url: string) => /^https?:\/\//i.test(url);

/**
 * The HTML error page (DESIGN §18): heading, message, hint and buttons in the page's language; the
 * English description as a detail when no translated message fits; the request id for the operator.
 */
export function renderErrorPage(req: Request, res: Response, error: OAuthError): void {
  if (!res.locals.t) useLocale(res, localeOfRequest(req)); // an error before the locale middleware (a rate limit)
  const t = res.locals.t;
  const key = pageMessageOf(error);
  const seconds = Number(error.headers['Retry-After']) || 1;
  const app = error.app && isWebUrl(error.app.url) ? error.app : undefined;
  const notFound = error.code === 'not_found';
  const heading = notFound ? t('errors:notFound.heading') : error.status >= 500 ? t('errors:heading.server') : t('errors:heading.request');
  renderPage(res, 'error', {
    title: heading,
    heading,
    message: key ? t(key, { count: seconds }) : t('errors:message.request'),
    detail: showsDetail(error, key, seconds) ? error.description : null,
    status: error.status,
    requestId: req.id ? String(req.id) : null,
    back: app ? { href: app.url, label: t('errors:backToApp', { app: app.name }) } : { href: '/', label: t('errors:home') },
  }, error.status);
}

/**
 * The error page for a request node:http refused before there was one (http/client-error.ts): in
 * English with Latchkey's own brand (app.locals, set in createApp), the description as its detail.
 */
export function renderRequestlessErrorPage(app: Express, status: number, description: string, done: (err: Error | null, html?: string) => void): void {
  const t = app.locals.t as (key: string) => string;
  const heading = t('errors:heading.request');
  app.render('error', {
    title: heading, heading, message: t('errors:message.request'), detail: description, status, requestId: null, back: { href: '/', label: t('errors:home') },
  }, done);
}

function logError(logger: Logger, req: Request, error: OAuthError) {
  const base = { reqId: req.id, code: error.code, status: error.status, path: req.path };
  const cause = error.cause as { message?: string; stack?: string; code?: string } | undefined;
  if (error.status >= 500) {
    logger.error({ ...base, cause: { message: cause?.message, code: cause?.code, stack: cause?.stack } }, error.description);
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
export function wantsHtml(req: Request): boolean {
  const path = pathOfTarget(req.originalUrl).toLowerCase();
  if (!isHostedPagePath(path)) return false;
  if (path === '/oauth/authorize' || path.startsWith('/oauth/logout')) return true;
  return req.accepts(['json', 'html']) === 'html';
}
