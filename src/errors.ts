/**
 * The error type and its small constructors: what services, middleware and the CLI throw. How an
 * error is answered over HTTP (JSON or the error page) is src/http/errors/error-handler.ts.
 */
export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'invalid_scope'
  | 'invalid_target'
  | 'invalid_token'
  | 'insufficient_scope'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'unsupported_response_type'
  | 'unsupported_token_type'
  | 'access_denied'
  // RFC 8628 §3.5: the device code grant's answers while the person has not approved
  | 'authorization_pending'
  | 'slow_down'
  | 'expired_token'
  | 'login_required'
  | 'consent_required'
  | 'interaction_required'
  | 'account_selection_required'
  | 'request_not_supported'
  | 'request_uri_not_supported'
  | 'invalid_redirect_uri'
  | 'invalid_client_metadata'
  | 'not_found'
  | 'too_many_requests'
  | 'temporarily_unavailable'
  | 'server_error';

// Statuses per RFC 6749/6750/7009/7662.
const STATUS: Partial<Record<OAuthErrorCode, number>> = {
  invalid_client: 401,
  invalid_token: 401,
  insufficient_scope: 403, // RFC 6750 §3.1
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
/** RFC 8707 §2: a resource indicator that is not an absolute URI, not one of ours, or beyond the grant. */
export const invalidTarget = (d: string) => new OAuthError('invalid_target', d);
export const invalidToken = (d: string) =>
  new OAuthError('invalid_token', d, {
    headers: { 'WWW-Authenticate': `Bearer error="invalid_token", error_description="${d.replace(/"/g, "'")}"` },
  });

/** RFC 6750 §3.1: the token is good but was not granted `scope`; the header names the scope needed. */
export const insufficientScope = (d: string, scope: string) =>
  new OAuthError('insufficient_scope', d, {
    headers: {
      'WWW-Authenticate': `Bearer error="insufficient_scope", error_description="${d.replace(/"/g, "'")}", scope="${scope}"`,
    },
  });

/** RFC 7591 §3.2.2: a registration's metadata refused; the description names the field. */
export const invalidClientMetadata = (d: string) => new OAuthError('invalid_client_metadata', d);
export const invalidRedirectUri = (d: string) => new OAuthError('invalid_redirect_uri', d);
