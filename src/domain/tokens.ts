/** What a grant hands back, before the token presenter shapes the RFC 6749 §5.1 response. */
export interface IssuedTokens {
  accessToken: string;
  expiresInSeconds: number;
  scope: string;
  idToken?: string;
  refreshToken?: string;
}

/**
 * Everything the database stores of a token response, made before the grant's statement runs:
 * only hashes are stored, so the JWTs are signed afterwards, outside any transaction.
 */
export interface PreparedTokens {
  now: Date;
  jti: string;
  jtiHash: string;
  accessExpiresAt: Date;
  familyId: string;
  refreshId: string;
  refreshToken: string;
  refreshHash: string;
  refreshExpiresAt: Date;
}

/** A live access token as introspection reports it (RFC 7662 §2.2), before the presenter names the fields. */
export interface ActiveToken {
  sub: string;
  clientId: string;
  scope: string;
  expiresAt: Date;
  issuedAt: Date;
  /** Standard platforms only (docs/decisions.md, "Agent-ready authorization"): the issuer; an access token's audience and id. */
  iss?: string;
  aud?: string | string[];
  jti?: string;
}
