import type { IssuedTokens } from '../domain/tokens';

/** The spec's token response (RFC 6749 §5.1); a token exchange's names the token type it issued (RFC 8693 §2.2.1). */
export function presentTokenResponse(t: IssuedTokens) {
  return {
    access_token: t.accessToken,
    ...(t.issuedTokenType ? { issued_token_type: t.issuedTokenType } : {}),
    token_type: 'Bearer',
    expires_in: t.expiresInSeconds,
    ...(t.refreshToken ? { refresh_token: t.refreshToken } : {}),
    ...(t.idToken ? { id_token: t.idToken } : {}),
    scope: t.scope,
  };
}
