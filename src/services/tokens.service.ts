import { digest } from '../crypto/digest';
import { peekKid, verifyHs512 } from '../crypto/jwt';
import { invalidToken } from '../errors';
import * as tokens from '../repositories/token.repository';
import type { Client } from '../domain/client';
import type { Platform } from '../domain/platform';
import type { ActiveToken } from '../presenters/introspection.presenter';
import type { Deps } from './deps';
import { parseScope } from './scopes';
import type { SigningKeys } from './signing-keys.service';
import type { AccessTokenCache, LiveAccessToken } from './access-token-cache';

/** Access and refresh tokens after issuance: userinfo, introspection (RFC 7662), revocation (RFC 7009). */
export function createTokens(deps: Deps, keys: SigningKeys, cache: AccessTokenCache) {
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
    if (!platformId) return undefined;
    const key = await keys.keyById(platformId, kid);
    if (!key) return undefined;
    const claims = await verifyHs512(token, key.secret, deps.config.baseUrl);
    if (!claims || typeof claims.jti !== 'string') return undefined;
    const found = await tokens.findAccessTokenWithUser(deps.db, digest(claims.jti));
    if (!found || found.token.platformId !== platformId) return undefined;
    if (found.token.revokedAt || found.token.expiresAt <= now) return undefined;
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

  async function activeToken(platform: Platform, token: string): Promise<ActiveToken | undefined> {
    if (token.startsWith('rt_')) {
      const rt = await findLiveRefreshToken(platform.id, token);
      if (!rt) return undefined;
      return { sub: rt.family.userId, clientId: rt.family.clientId, scope: rt.family.scope, expiresAt: rt.expiresAt, issuedAt: rt.createdAt };
    }
    const at = await findLiveAccessToken(platform.id, token);
    if (!at) return undefined;
    return { sub: at.token.userId, clientId: at.token.clientId, scope: at.token.scope, expiresAt: at.token.expiresAt, issuedAt: at.token.createdAt };
  }

  return {
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
     * The active-token facts, or undefined for anything not active on this platform. RFC 7662 §4:
     * a token issued to another client is reported inactive unless the caller is registered as a
     * resource server, so one client cannot read another's grants (or learn which tokens live).
     */
    async introspect(platform: Platform, token: string, caller: Client | undefined): Promise<ActiveToken | undefined> {
      const found = await activeToken(platform, token);
      if (!found || !caller || (found.clientId !== caller.id && !caller.isResourceServer)) return undefined;
      return found;
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
      const key = kid && (await keys.keyById(platform.id, kid));
      if (!key) return;
      const claims = await verifyHs512(token, key.secret, deps.config.baseUrl);
      if (!claims || typeof claims.jti !== 'string') return;
      if (client && claims.client_id !== client.id) return;
      await tokens.revokeAccessToken(deps.db, digest(claims.jti), now);
    },
  };
}

export type Tokens = ReturnType<typeof createTokens>;
