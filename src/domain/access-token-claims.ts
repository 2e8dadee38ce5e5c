/** What an access token says, in seconds since the epoch, before a profile names the claims. */
export interface AccessTokenFacts {
  iss: string;
  /** The user's id; a client credentials token's is the client's own (wire) id (RFC 9068 §2.2). */
  sub: string;
  clientId: string;
  /** Whom the token is for: the client when no resource is named (docs/decisions.md, "Agent-ready authorization"). */
  audience: string | string[];
  /** Granted scopes, space-separated; may be empty. */
  scope: string;
  jti: string;
  iat: number;
  exp: number;
  /** When the user signed in; absent for a token no person signed in for (client credentials). */
  authTime?: number;
  /** RFC 8176 methods, space-separated, and the acr reached; null when the grant predates them. */
  amr?: string | null;
  acr?: string | null;
  /** RFC 8693 §4.1: who acts for the subject (token exchange), newest actor outermost. */
  act?: ActorClaim;
}

/** RFC 8693 §4.1 `act`: the current actor, and in `act` the one before it. */
export interface ActorClaim {
  sub: string;
  act?: ActorClaim;
}

/** The seed profile's access token: the spec's claims, in the spec's order, never anything else. */
export function seedAccessTokenClaims(f: AccessTokenFacts) {
  return {
    iss: f.iss,
    sub: f.sub,
    human_guid: f.sub,
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
 * granted (§2.2.3), `auth_time`, `acr`, `amr` (§2.2.1) when known, and RFC 8693's `act` for an
 * exchanged token acting for its subject. Nothing else: `sub` is the user id `human_guid` repeats
 * elsewhere (a client credentials token's: the client's id), and the header's `typ` says what the token is.
 */
export function standardAccessTokenClaims(f: AccessTokenFacts) {
  return {
    iss: f.iss,
    exp: f.exp,
    aud: f.audience,
    sub: f.sub,
    client_id: f.clientId,
    iat: f.iat,
    jti: f.jti,
    ...(f.scope ? { scope: f.scope } : {}),
    ...(f.authTime !== undefined ? { auth_time: f.authTime } : {}),
    ...(f.acr ? { acr: f.acr } : {}),
    ...(f.amr ? { amr: f.amr.split(' ') } : {}),
    ...(f.act ? { act: f.act } : {}),
  };
}
