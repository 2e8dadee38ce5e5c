import { OAuthError } from '../../src/errors';
import { toOAuthError } from '../../src/http/errors/to-oauth-error';

const err = (message: string, code?: string) => Object.assign(new Error(message), code ? { code } : {});

describe('toOAuthError', () => {
  it.each([
    ['a refused connection', err('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED')],
    ['a reset connection', err('read ECONNRESET', 'ECONNRESET')],
    ['a write to a closed socket', err('write EPIPE', 'EPIPE')],
    ['an unreachable host', err('connect EHOSTUNREACH 10.0.0.9:5432', 'EHOSTUNREACH')],
    ['a server shutting down', err('terminating connection due to administrator command', '57P01')],
    ['a server starting up', err('the database system is starting up', '57P03')],
    ['too many connections', err('sorry, too many clients already', '53300')],
    ['a connection exception', err('connection failure', '08006')],
    ['a connection lost mid-query', err('Connection terminated unexpectedly')],
    ['a connect timeout (pg)', err('timeout expired')],
    ['a connect timeout (pg pool)', err('Connection terminated due to connection timeout')],
    ['a client after its connection died', err('Client has encountered a connection error and is not queryable')],
    ['a closed client', err('Client was closed and is not queryable')],
    ['a full pool', err('Knex: Timeout acquiring a connection. The pool is probably full.')],
  ])('maps %s to 503 temporarily_unavailable with Retry-After', (_label, e) => {
    const mapped = toOAuthError(e);
    expect([mapped.code, mapped.status, mapped.headers['Retry-After']]).toEqual(['temporarily_unavailable', 503, '5']);
  });

  it.each([
    ['a bug', new TypeError("Cannot read properties of undefined (reading 'id')")],
    ['an SQL error', err('syntax error at or near "FROM"', '42601')],
    ['a statement timeout in our own code', err('the request timeout expired')],
  ])('maps %s to 500 server_error without its text', (_label, e) => {
    const mapped = toOAuthError(e);
    expect([mapped.code, mapped.status, mapped.description]).toEqual([
      'server_error',
      500,
      'An unexpected error occurred',
    ]);
  });

  it('keeps an OAuthError as it is, and maps malformed bodies to invalid_request', () => {
    const own = new OAuthError('invalid_grant', 'x');
    expect(toOAuthError(own)).toBe(own);
    expect(toOAuthError(Object.assign(new Error('too large'), { type: 'entity.too.large', status: 413 })).status).toBe(
      413,
    );
    expect(toOAuthError(Object.assign(new Error('bad'), { type: 'entity.parse.failed', status: 400 })).code).toBe(
      'invalid_request',
    );
  });
});
