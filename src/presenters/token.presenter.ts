import type { IssuedTokens } from '../domain/tokens';

/** The spec's token response (RFC 6749 §5.1). */
export function presentTokenResponse(t: IssuedTokens) {
  return {
    access_token: t.accessToken,
    token_type: 'Bearer',
    expires_in: t.expiresInSeconds,
    ...(t.refreshToken ? { refresh_token: t.refreshToken } : {}),
    ...(t.idToken ? { id_token: t.idToken } : {}),
    scope: t.scope,
  };
}
