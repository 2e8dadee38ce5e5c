import type { ErrorRequestHandler, Request } from 'express';
import type { Logger } from 'pino';

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
}

/** The one error type. `code` is the wire code; `cause` is logged, never sent. */
export class OAuthError extends Error {
  readonly status: number;
  readonly headers: Record<string, string>;

  constructor(
    readonly code: OAuthErrorCode,
    readonly description: string,
    options: OAuthErrorOptions = {},
  ) {
    super(`${code}: ${description}`, { cause: options.cause });
    this.status = options.status ?? STATUS[code] ?? 400;
    this.headers = options.headers ?? {};
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
    if (wantsHtml(req)) {
      res.render('error', {
        title: 'Something went wrong',
        platformName: res.locals.platform?.name ?? null,
        heading: error.status >= 500 ? 'Something went wrong' : 'This request could not be completed',
        message: error.description,
        status: error.status,
      });
      return;
    }
    res.json({ error: error.code, error_description: error.description });
  };
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

/** Hosted pages (not /oauth/* or discovery) answer errors with the HTML error page. */
function wantsHtml(req: Request): boolean {
  if (req.originalUrl.startsWith('/admin/api/')) return false;
  if (req.path === '/oauth/authorize' || req.path.startsWith('/oauth/logout')) return true;
  // includes: a standard platform's discovery lives under its issuer path too (/platforms/G/.well-known/…)
  return !req.path.startsWith('/oauth/') && !req.path.includes('/.well-known/') && req.accepts(['json', 'html']) === 'html';
}
