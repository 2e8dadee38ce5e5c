import { digest } from '../../crypto/digest';
import { invalidGrant } from '../../errors';
import * as tokens from '../../repositories/token.repository';
import * as users from '../../repositories/user.repository';
import type { Deps } from '../deps';
import { parseScope } from '../scopes';
import type { ClientCtx } from './authorization-code.grant';
import type { TokenIssuer } from './issue-tokens';
import type { SigningKeys } from '../signing-keys.service';

export interface RefreshInput {
  refresh_token: string;
  scope?: string;
}

/**
 * Rotates a refresh token (DESIGN §5): the old one dies, except that within the reuse grace
 * window it may be presented again and yields another valid pair; after the window a rotated
 * token revokes its whole family. Throws invalid_grant.
 */
export function createRefreshTokenGrant(deps: Deps, keys: SigningKeys, issueTokens: TokenIssuer) {
  return async function rotateRefreshToken(ctx: ClientCtx, input: RefreshInput) {
    const signingKey = await keys.activeKey(ctx.platform.id);
    const outcome = await deps.db.transaction(async (trx) => {
      const token = await tokens.findRefreshTokenForUpdate(trx, ctx.platform.id, digest(input.refresh_token));
      if (!token || token.family.clientId !== ctx.client.id) return { error: 'The refresh token is invalid' };
      const now = deps.now();
      if (token.family.revokedAt) return { error: 'The refresh token has been revoked' };
      if (token.expiresAt <= now) return { error: 'The refresh token has expired' };
      if (token.rotatedAt) {
        const sinceRotation = (now.getTime() - token.rotatedAt.getTime()) / 1000;
        if (sinceRotation > deps.config.refreshReuseGraceSeconds) {
          await tokens.revokeFamily(trx, token.familyId, now);
          return { error: 'The refresh token was already used; its family has been revoked' };
        }
      }
      const granted = parseScope(token.family.scope);
      let scopes = granted;
      if (input.scope !== undefined) {
        // RFC 6749 §6 narrowing; scopes beyond the grant are dropped silently, as the spec's scope rule 1 says
        scopes = granted.filter((s) => parseScope(input.scope).includes(s) || s === 'offline_access');
      }
      const user = await users.findById(trx, ctx.platform.id, token.family.userId);
      if (!user) return { error: 'The user no longer exists' };
      await tokens.markRotated(trx, token.id, now);
      const issued = await issueTokens(trx, {
        platformId: ctx.platform.id,
        signingKey,
        client: ctx.client,
        user,
        scopes,
        authTime: token.family.authTime,
        familyId: token.familyId,
        browserSessionId: token.family.browserSessionId,
      });
      return { issued };
    });
    if ('error' in outcome) throw invalidGrant(outcome.error!);
    return outcome.issued;
  };
}
