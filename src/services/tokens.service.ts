import { decodeJwt } from 'jose';
import { digest } from '../crypto/digest';
import { JWT_ACCESS_TOKEN_TYP, peekKid, verifyHs512, verifyJwt, type Claims } from '../crypto/jwt';
import { insufficientScope, invalidToken } from '../errors';
import * as tokens from '../repositories/token.repository';
import * as clients from '../repositories/client.repository';
import { wireClientId, type Client } from '../domain/client';
import { issuerOf, type Platform } from '../domain/platform';
import type { AccessTokenRecord, ActiveToken } from '../domain/tokens';
import { parseAccessTokenJti } from '../domain/access-token-id';
import * as liveness from '../repositories/access-token-liveness.repository';
import type { ActorClaim } from '../domain/access-token-claims';
import type { Deps } from './deps';
import type { SigningKeys } from './signing-keys.service';
import type { Platforms } from './platforms.service';
import type { AccessTokenCache, LiveAccessToken } from './access-token-cache';
import { parseScope } from './scopes';

/** Access and refresh tokens after issuance: userinfo, introspection (RFC 7662), revocation (RFC 7009). */
export function createTokens(deps: Deps, keys: SigningKeys, platforms: Platforms, cache: AccessTokenCache) {
  /**
   * The claims of an access-token JWT as this platform's profile signs them, or
   * undefined. Seed: HS512 under the platform key its kid names. Standard: RS256 under the public
   * key its kid names, with the key's alg, never the header's (RFC 8725 §3.1), and `typ: at+jwt`
   * (RFC 9068 §4), so an ID token signed by the same key is no access token.
   */
  async function verifiedAccessClaims(platform: Platform, kid: string, token: string): Promise<Claims | undefined> {
    const issuer = issuerOf(deps.config.baseUrl, platform);
    if (platform.signingProfile === 'standard') {
      const published = await keys.publicKeyById(platform.id, kid);
      return published?.alg === 'RS256'
        ? verifyJwt(token, published.key, published.alg, issuer, { typ: JWT_ACCESS_TOKEN_TYP })
        : undefined;
    }
    const key = await keys.keyById(platform.id, kid);
    return key ? verifyHs512(token, key.secret, issuer) : undefined;
  }

  /**
   * The record of a verified access token while the grant its jti names is live (docs/decisions.md,
   * "Access tokens without a row"), with its user; undefined when it is not live.
   */
  async function liveRecord(platformId: string, claims: Claims): Promise<LiveAccessToken | undefined> {
    const { jti, iat, exp } = claims;
    if (typeof jti !== 'string' || typeof iat !== 'number' || typeof exp !== 'number') return undefined;
    const jtiHash = digest(jti);
    const id = parseAccessTokenJti(jti, () => jtiHash);
    if (!id) return undefined;
    const issuedAt = new Date(iat * 1000);
    const found = await liveness.findLiveToken(deps.db, { platformId, ...id, jtiHash });
    if (!found) return undefined;
    const token: AccessTokenRecord = {
      jtiHash,
      platformId,
      clientId: found.clientId,
      userId: found.user?.id ?? null,
      scope: typeof claims.scope === 'string' ? claims.scope : '',
      ...id,
      expiresAt: new Date(exp * 1000),
      issuedAt,
    };
    return { token, user: found.user };
  }

  /** Verifies an access-token JWT of this platform and finds its live record with the user. */
  async function findLiveAccessToken(givenPlatformId: string | undefined, token: string) {
    const now = deps.now();
    const tokenDigest = digest(token);
    const cached = cache.get(tokenDigest, now);
    if (cached) return !givenPlatformId || cached.token.platformId === givenPlatformId ? cached : undefined;
    const readAtEpoch = cache.epoch();
    const kid = peekKid(token);
    if (!kid) return undefined;
    const platformId = givenPlatformId ?? (await keys.platformIdOfKid(kid));
    const platform = platformId === undefined ? undefined : await platforms.findPlatform(platformId);
    if (!platform) return undefined;
    const claims = await verifiedAccessClaims(platform, kid, token);
    const found = claims && (await liveRecord(platform.id, claims));
    if (!found || found.token.expiresAt <= now) return undefined;
    cache.put(tokenDigest, found, readAtEpoch);
    return found;
  }

  async function findLiveRefreshToken(platformId: string, token: string) {
    const found = await tokens.findRefreshToken(deps.db, platformId, digest(token));
    if (!found || found.family.revokedAt || found.expiresAt <= deps.now()) return undefined;
    // A rotated token is only a grace-window courtesy for lost responses, not an active credential.
    if (found.rotatedAt) return undefined;
    return found;
  }

  /**
   * A standard platform's introspection also names the issuer and, for an access token, its `aud`
   * and `jti` (RFC 7662 §2.2), and `act` for an exchanged token (RFC 8693 §4.1), read from the token
   * itself: it has just been verified, or was when its cache entry (keyed by the whole token) was
   * made. The seed response keeps the spec's fields.
   */
  function standardFacts(
    platform: Platform,
    accessToken?: string,
  ): Pick<ActiveToken, 'iss' | 'aud' | 'jti' | 'act'> & { sub?: string } {
    if (platform.signingProfile !== 'standard') return {};
    const iss = issuerOf(deps.config.baseUrl, platform);
    if (!accessToken) return { iss };
    const { aud, jti, sub, act } = decodeJwt<{ act?: ActorClaim }>(accessToken);
    return { iss, aud, jti, sub, ...(act ? { act } : {}) };
  }

  async function activeToken(platform: Platform, token: string): Promise<ActiveToken | undefined> {
    if (token.startsWith('rt_')) {
      const rt = await findLiveRefreshToken(platform.id, token);
      if (!rt) return undefined;
      return {
        sub: rt.family.userId,
        clientId: rt.family.clientId,
        scope: rt.family.scope,
        expiresAt: rt.expiresAt,
        issuedAt: rt.createdAt,
        ...standardFacts(platform),
      };
    }
    const at = await findLiveAccessToken(platform.id, token);
    if (!at) return undefined;
    const { sub, ...facts } = standardFacts(platform, token);
    return {
      // A token without a user is a client's (RFC 9068 §2.2), or was exchanged from one: its `sub` says whose.
      sub: at.token.userId ?? sub!,
      ...(at.token.userId === null ? { isUserless: true } : {}),
      clientId: at.token.clientId,
      scope: at.token.scope,
      expiresAt: at.token.expiresAt,
      issuedAt: at.token.issuedAt,
      ...facts,
    };
  }

  return {
    /**
     * A live access token of this platform presented to a grant (RFC 8693 subject or actor token):
     * its record, as stored, and its claims, verified (or verified when its cache entry was made).
     * Undefined when it is not one: forged, another platform's, expired, revoked, its user disabled.
     */
    async findPresentedAccessToken(
      platform: Platform,
      token: string,
    ): Promise<{ record: AccessTokenRecord; claims: Claims & { act?: ActorClaim } } | undefined> {
      const found = await findLiveAccessToken(platform.id, token);
      return found && { record: found.token, claims: decodeJwt(token) };
    },

    /**
     * The live access token and its user, for userinfo. Without platform_guid (the spec lists
     * only the header for userinfo) the platform is the one whose key signed the token. The same
     * object comes back while the token stays cached. Throws invalid_token.
     */
    async authenticateAccessToken(platformId: string | undefined, accessToken: string): Promise<LiveAccessToken> {
      const found = await findLiveAccessToken(platformId, accessToken);
      if (!found) throw invalidToken('The access token is invalid, expired or revoked');
      return found;
    },

    /**
     * OIDC Core 5.3: UserInfo answers an OpenID request. On a standard platform an access token
     * granted without openid (an OAuth request, docs/decisions.md "Agent-ready authorization")
     * gets no claims; a seed platform keeps the spec's behaviour. Throws insufficient_scope, and
     * invalid_token for a token no user is behind (client credentials).
     */
    async requireUserinfoScope(live: LiveAccessToken): Promise<void> {
      // A client's own token (client credentials) has no user to describe, whatever its scope.
      if (!live.user) throw invalidToken('The access token was issued to a client for itself and has no user');
      if (parseScope(live.token.scope).includes('openid')) return;
      const platform = await platforms.findPlatform(live.token.platformId);
      if (platform?.signingProfile === 'standard')
        throw insufficientScope('The access token was not granted the openid scope', 'openid');
    },

    /**
     * The active-token facts, or undefined for anything not active on this platform. RFC 7662 §4:
     * a token issued to another client is reported inactive unless the caller is registered as a
     * resource server, so one client cannot read another's grants (or learn which tokens live).
     */
    async introspect(platform: Platform, token: string, caller: Client | undefined): Promise<ActiveToken | undefined> {
      const found = await activeToken(platform, token);
      if (!found || !caller || (found.clientId !== caller.id && !caller.isResourceServer)) return undefined;
      // The token's client by the id it is known by on the wire (a metadata document's URL).
      const owner =
        found.clientId === caller.id ? caller : await clients.findById(deps.db, platform.id, found.clientId);
      return owner ? { ...found, clientId: wireClientId(owner) } : found;
    },

    /**
     * RFC 7009: revokes an access token, or a refresh token with its family and their access
     * tokens. Unknown tokens are not an error; an authenticated client only revokes its own.
     */
    async revoke(platform: Platform, token: string, client: Client | undefined): Promise<void> {
      const now = deps.now();
      if (token.startsWith('rt_')) {
        const rt = await tokens.findRefreshToken(deps.db, platform.id, digest(token));
        if (!rt || (client && rt.family.clientId !== client.id)) return;
        await tokens.revokeFamily(deps.db, rt.familyId, now);
        return;
      }
      const kid = peekKid(token);
      const claims = kid ? await verifiedAccessClaims(platform, kid, token) : undefined;
      if (!claims || (client && claims.client_id !== wireClientId(client))) return;
      // A token no longer live stays dead (its grant, user or client is gone for good): nothing to deny.
      const live = await liveRecord(platform.id, claims);
      if (!live || live.token.expiresAt <= now) return;
      await liveness.denyAccessToken(deps.db, live.token);
    },
  };
}

export type Tokens = ReturnType<typeof createTokens>;
