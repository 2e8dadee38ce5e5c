import { digest } from '../../crypto/digest';
import { invalidGrant } from '../../errors';
import * as statements from '../../repositories/grant-statements.repository';
import * as tokens from '../../repositories/token.repository';
import type { Deps } from '../deps';
import { parseScope } from '../scopes';
import type { SigningKeys } from '../signing-keys.service';
import type { ClientCtx } from './authorization-code.grant';
import type { TokenIssuer } from './issue-tokens';

export interface RefreshInput {
  refresh_token: string;
  scope?: string;
}

/**
 * Rotates a refresh token (DESIGN §5) as one compare-and-swap statement: the old one dies,
 * except that within the reuse grace window it may be presented again and yields another valid
 * pair; after the window a rotated token revokes its whole family. A `scope` narrows the access
 * token (RFC 6749 §6); scopes beyond the grant are dropped silently (spec scope rule 1).
 * Throws invalid_grant.
 */
export function createRefreshTokenGrant(deps: Deps, keys: SigningKeys, issuer: TokenIssuer) {
  return async function rotateRefreshToken(ctx: ClientCtx, input: RefreshInput) {
    const signingKey = await keys.activeKey(ctx.platform.id);
    const prepared = issuer.prepare();
    const row = await statements.rotateRefreshToken(deps.db, {
      platformId: ctx.platform.id,
      tokenHash: digest(input.refresh_token),
      clientId: ctx.client.id,
      graceStart: new Date(prepared.now.getTime() - deps.config.refreshReuseGraceSeconds * 1000),
      requestedScopes: input.scope === undefined ? null : parseScope(input.scope),
      tokens: prepared,
    });
    if (!row || row.clientId !== ctx.client.id) throw invalidGrant('The refresh token is invalid');
    if (!row.rotated) {
      if (row.familyRevokedAt) throw invalidGrant('The refresh token has been revoked');
      if (row.expiresAt <= prepared.now) throw invalidGrant('The refresh token has expired');
      // Only a rotation older than the grace window is left: reuse of a stolen or replayed token.
      await tokens.revokeFamily(deps.db, row.familyId, prepared.now);
      throw invalidGrant('The refresh token was already used; its family has been revoked');
    }
    if (!row.user) throw invalidGrant('The user no longer exists');
    return issuer.sign(prepared, {
      client: ctx.client,
      user: row.user,
      scope: row.accessScope!,
      authTime: row.authTime,
      hasRefreshToken: true,
      signingKey,
    });
  };
}
