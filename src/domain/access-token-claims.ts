/** What an access token says, in seconds since the epoch, before a profile names the claims. */
export interface AccessTokenFacts {
  iss: string;
  userId: string;
  clientId: string;
  /** Whom the token is for: the client when no resource is named (docs/decisions.md, "Agent-ready authorization"). */
  audience: string | string[];
  /** Granted scopes, space-separated; may be empty. */
  scope: string;
  jti: string;
  iat: number;
  exp: number;
  authTime: number;
  /** RFC 8176 methods, space-separated, and the acr reached; null when the grant predates them. */
  amr?: string | null;
  acr?: string | null;
}

/** The seed profile's access token: the spec's claims, in the spec's order, never anything else. */
export function seedAccessTokenClaims(f: AccessTokenFacts) {
  return {
    iss: f.iss,
    sub: f.userId,
    human_guid: f.userId,
    aud: f.clientId,
    client_id: f.clientId,
    scope: f.scope,
    jti: f.jti,
    iat: f.iat,
    exp: f.exp,
    token_type: 'Bearer',
  };
}

/**
 * The standard profile's access token, RFC 9068 §2.2: the required claims, `scope` when one was
 * granted (§2.2.3), and `auth_time`, `acr`, `amr` (§2.2.1) when known. Nothing else: `sub` is the
 * user id `human_guid` repeats elsewhere, and the header's `typ` says what the token is.
 */
export function standardAccessTokenClaims(f: AccessTokenFacts) {
  return {
    iss: f.iss,
    exp: f.exp,
    aud: f.audience,
    sub: f.userId,
    client_id: f.clientId,
    iat: f.iat,
    jti: f.jti,
    ...(f.scope ? { scope: f.scope } : {}),
    auth_time: f.authTime,
    ...(f.acr ? { acr: f.acr } : {}),
    ...(f.amr ? { amr: f.amr.split(' ') } : {}),
  };
}
