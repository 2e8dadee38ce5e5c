import type { TokenAnchor } from './access-token-id';
import type { ActorClaim } from './access-token-claims';

/** RFC 8693 §3: the token type URI of an access token, the one type token exchange takes and issues. */
export const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';

/** What a grant hands back, before the token presenter shapes the RFC 6749 §5.1 response. */
export interface IssuedTokens {
  accessToken: string;
  expiresInSeconds: number;
  scope: string;
  idToken?: string;
  refreshToken?: string;
  /** RFC 8693 §2.2.1: what a token exchange issued (an access token's URI). */
  issuedTokenType?: string;
}

/**
 * Everything the database stores of a token response, made before the grant's statement runs:
 * only hashes are stored, so the JWTs are signed afterwards, outside any transaction.
 */
export interface PreparedTokens {
  now: Date;
  /** The random part of the access token's jti; the grant it lives by is known after the statement (src/domain/access-token-id.ts). */
  jtiRandom: string;
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
  /** No user is behind it (a client credentials token, or one exchanged from such): `sub` is a client's id. */
  isUserless?: boolean;
  clientId: string;
  scope: string;
  expiresAt: Date;
  issuedAt: Date;
  /** Standard platforms only (docs/decisions.md, "Agent-ready authorization"): the issuer; an access token's audience and id. */
  iss?: string;
  aud?: string | string[];
  jti?: string;
  /** RFC 8693 §4.1: who acts for the subject, on an exchanged token. */
  act?: ActorClaim;
}

/**
 * A live access token as verified: what its claims say, and what the grant it lives by says of its
 * client and user (docs/decisions.md, "Access tokens without a row").
 */
export interface AccessTokenRecord {
  jtiHash: string;
  platformId: string;
  /** The client it was issued to (its internal id). */
  clientId: string;
  /** null: no user is behind it (client credentials, or exchanged from such a token). */
  userId: string | null;
  scope: string;
  /** The grant it lives by, and whether it was exchanged (RFC 8693) and has a lineage row too. */
  anchor: TokenAnchor;
  exchanged: boolean;
  expiresAt: Date;
  issuedAt: Date;
}
