import { digest } from '../../crypto/digest';
import { newRefreshToken, newTimeOrderedId, randomToken } from '../../crypto/random';
import { wireClientId, type Client } from '../../domain/client';
import { issuerOf, type Platform } from '../../domain/platform';
import type { User } from '../../domain/user';
import { idTokenUserClaims } from '../../domain/claims';
import { seedAccessTokenClaims, standardAccessTokenClaims, type ActorClaim } from '../../domain/access-token-claims';
import type { IssuedTokens, PreparedTokens } from '../../domain/tokens';
import { formatAccessTokenJti, type TokenAnchor } from '../../domain/access-token-id';
import type { Deps } from '../deps';
import { createSidOf } from '../session-id';
import type { SigningKeys } from '../signing-keys.service';
import { idTokenAlgOf, leftHalfHash, type TokenSigner } from '../token-signer';

export type { PreparedTokens };
export type PreparedAccessToken = Pick<PreparedTokens, 'now' | 'jtiRandom' | 'accessExpiresAt'>;

export interface SignInput {
  /** The access token's id, naming the grant it lives by (accessTokenJti). */
  jti: string;
  platform: Platform;
  client: Client;
  user: User;
  scope: string;
  /** The access token's `aud`; the client when omitted. Standard platforms only: a seed token's `aud` is always its client. */
  audience?: string | string[];
  authTime: Date;
  /** How the user signed in (RFC 8176, space-separated) and the acr reached; null for codes issued before amr/acr were recorded. */
  amr?: string | null;
  acr?: string | null;
  nonce?: string | null;
  /** The browser sign-in the code (or the refresh family) came from: the ID token's `sid`; null for codes issued before it was kept. */
  browserSessionId?: string | null;
  hasRefreshToken: boolean;
}

/** An access token alone, for a standard platform's grants that issue nothing else (client credentials, token exchange). */
export interface AccessOnlyInput {
  /** The access token's id, naming the grant it lives by (accessTokenJti). */
  jti: string;
  platform: Platform;
  client: Client;
  /** The user's id, or a client's wire id for a token no user is behind (RFC 9068 §2.2). */
  sub: string;
  scope: string;
  audience: string | string[];
  /** Seconds since the epoch, as the subject token said; absent when no person signed in. */
  authTime?: number;
  amr?: string | null;
  acr?: string | null;
  act?: ActorClaim;
  /** RFC 8693 §2.2.1 issued_token_type, for a token exchange. */
  issuedTokenType?: string;
}

const seconds = (d: Date) => Math.floor(d.getTime() / 1000);

/** The jti of the access token `prepared` is for, living by `anchor` (src/domain/access-token-id.ts). */
export const accessTokenJti = (prepared: Pick<PreparedTokens, 'jtiRandom'>, anchor: TokenAnchor, exchanged = false) =>
  formatAccessTokenJti({ anchor, exchanged }, prepared.jtiRandom);

export function createTokenIssuer(deps: Deps, signer: TokenSigner, keys: SigningKeys) {
  const sidOf = createSidOf(deps.config.masterKey!);
  return {
    prepare(): PreparedTokens {
      const now = deps.now();
      const refreshToken = newRefreshToken();
      return {
        now,
        jtiRandom: randomToken(16),
        accessExpiresAt: new Date((seconds(now) + deps.config.accessTokenTtlSeconds) * 1000),
        familyId: newTimeOrderedId(),
        refreshId: newTimeOrderedId(),
        refreshToken,
        refreshHash: digest(refreshToken),
        refreshExpiresAt: new Date(now.getTime() + deps.config.refreshTokenTtlSeconds * 1000),
      };
    },

    /** What an access token alone needs (no refresh token to mint): its id and default expiry. */
    prepareAccess(): PreparedAccessToken {
      const now = deps.now();
      return {
        now,
        jtiRandom: randomToken(16),
        accessExpiresAt: new Date((seconds(now) + deps.config.accessTokenTtlSeconds) * 1000),
      };
    },

    /**
     * Loads the keys `sign` will need before a grant spends its code or refresh token, so that a
     * key problem fails the request rather than consuming the grant without an answer.
     */
    async loadKeys(platform: Platform, client: Client): Promise<void> {
      if (platform.signingProfile !== 'standard') return void (await keys.activeKey(platform.id));
      const alg = idTokenAlgOf(platform, client);
      await keys.activeAsymmetricKey(platform.id, 'RS256');
      if (alg !== 'HS512' && alg !== 'RS256') await keys.activeAsymmetricKey(platform.id, alg);
    },

    /** The access token, the ID token when openid was granted, and the refresh token when stored. */
    async sign(prepared: PreparedTokens, input: SignInput): Promise<IssuedTokens> {
      const { baseUrl } = deps.config;
      const iss = issuerOf(baseUrl, input.platform);
      const iat = seconds(prepared.now);
      const exp = seconds(prepared.accessExpiresAt);
      const scopes = input.scope.split(' ');
      const facts = {
        iss,
        sub: input.user.id,
        clientId: wireClientId(input.client),
        audience: input.audience ?? wireClientId(input.client),
        scope: input.scope,
        jti: input.jti,
        iat,
        exp,
        authTime: seconds(input.authTime),
        amr: input.amr,
        acr: input.acr,
      };
      // Standard: an RFC 9068 JWT access token (docs/decisions.md, "Agent-ready authorization"); seed: the spec's.
      const accessClaims =
        input.platform.signingProfile === 'standard' ? standardAccessTokenClaims(facts) : seedAccessTokenClaims(facts);
      const accessToken = await signer.signAccessToken(input.platform, accessClaims);
      let idToken: string | undefined;
      if (scopes.includes('openid')) {
        const claims = {
          ...idTokenUserClaims(input.user, scopes, baseUrl),
          iss,
          aud: wireClientId(input.client),
          azp: wireClientId(input.client),
          iat,
          exp,
          auth_time: seconds(input.authTime),
          // OIDC Core 3.1.3.6: the left half of the hash of the ID token's own alg.
          at_hash: leftHalfHash(idTokenAlgOf(input.platform, input.client), accessToken),
          ...(input.nonce ? { nonce: input.nonce } : {}),
          // OIDC Core 2 / RFC 8176: additions to the seed profile's claims.
          ...(input.amr ? { amr: input.amr.split(' ') } : {}),
          ...(input.acr ? { acr: input.acr } : {}),
          // Front-/Back-Channel Logout: the browser sign-in, stable across its refreshes (both profiles).
          ...(input.browserSessionId ? { sid: sidOf(input.browserSessionId, input.user.id) } : {}),
        };
        // The client's alg and key — a confidential client's secret with no kid, else a platform key with its kid.
        idToken = await signer.signForClient(input.platform, input.client, claims);
      }
      return {
        accessToken,
        expiresInSeconds: exp - iat,
        scope: input.scope,
        idToken,
        refreshToken: input.hasRefreshToken ? prepared.refreshToken : undefined,
      };
    },

    /** An RFC 9068 access token and nothing else: no ID token, no refresh token (RFC 6749 §4.4.3). */
    async signAccessOnly(prepared: PreparedAccessToken, input: AccessOnlyInput): Promise<IssuedTokens> {
      const iat = seconds(prepared.now);
      const exp = seconds(prepared.accessExpiresAt);
      const claims = standardAccessTokenClaims({
        iss: issuerOf(deps.config.baseUrl, input.platform),
        sub: input.sub,
        clientId: wireClientId(input.client),
        audience: input.audience,
        scope: input.scope,
        jti: input.jti,
        iat,
        exp,
        authTime: input.authTime,
        amr: input.amr,
        acr: input.acr,
        act: input.act,
      });
      return {
        accessToken: await signer.signAccessToken(input.platform, claims),
        expiresInSeconds: exp - iat,
        scope: input.scope,
        ...(input.issuedTokenType ? { issuedTokenType: input.issuedTokenType } : {}),
      };
    },
  };
}

export type TokenIssuer = ReturnType<typeof createTokenIssuer>;
