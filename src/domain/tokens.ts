/** What a grant hands back, before the token presenter shapes the RFC 6749 §5.1 response. */
export interface IssuedTokens {
  accessToken: string;
  expiresInSeconds: number;
  scope: string;
  idToken?: string;
  refreshToken?: string;
}
