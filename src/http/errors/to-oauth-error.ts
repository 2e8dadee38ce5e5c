import { OAuthError } from '../../errors';

// Socket errors, and SQLSTATE classes 08 (connection exception), 57P (shutdown, cannot connect now), 53300 (too many connections),
// 57014 (statement cancelled: DB_STATEMENT_TIMEOUT_MS ran out on an overloaded database).
const DATABASE_UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  '57P01',
  '57P02',
  '57P03',
  '53300',
  '08000',
  '08001',
  '08003',
  '08004',
  '08006',
  '57014',
]);

/** pg error codes that mean "the database is not there right now". */
function isDatabaseUnavailable(err: unknown): boolean {
  const e = err as { code?: string; message?: string } | undefined;
  if (!e) return false;
  if (e.code && DATABASE_UNAVAILABLE_CODES.has(e.code)) return true;
  // pg and knex: a dead or closed connection, a connect timeout ("timeout expired"), a full pool,
  // the client-side statement timeout (through PgBouncer, on PGlite: "Query read timeout")
  return /Knex: Timeout acquiring a connection|Connection terminated|connect ECONNREFUSED|not queryable|^timeout expired$|^Query read timeout$/.test(
    e.message ?? '',
  );
}

/**
 * SQLSTATE class 22 (data exception: 22P02 invalid text representation, 22007/22008 datetime,
 * 22001 string too long, 22003 numeric out of range, 22021 bad encoding or NUL byte, …): Postgres
 * refused a value the request supplied. Identifiers are checked before any query (src/domain/ids.ts);
 * this is the net for a check that was missed, so bad input stays a 400, never a 500.
 */
export function isInvalidInput(err: unknown): boolean {
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
  if (e?.type === 'entity.too.large')
    return new OAuthError('invalid_request', 'The request body is too large', { status: 413, cause: err });
  if (e?.type === 'parameters.too.many')
    return new OAuthError('invalid_request', 'Too many parameters', { status: 413, cause: err });
  if (e && (e.status === 400 || e.statusCode === 400))
    return new OAuthError('invalid_request', 'Malformed request', { cause: err });
  if (isInvalidInput(err))
    return new OAuthError('invalid_request', 'A parameter has a value this server cannot accept', { cause: err });
  if (isDatabaseUnavailable(err)) {
    return new OAuthError('temporarily_unavailable', 'The service is temporarily unavailable, try again shortly', {
      headers: { 'Retry-After': '5' },
      cause: err,
    });
  }
  return new OAuthError('server_error', 'An unexpected error occurred', { cause: err });
}
