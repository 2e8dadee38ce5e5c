import { digest } from '../../crypto/digest';
import { createKeyedDigest } from '../../crypto/keyed-digest';
import { invalidGrant, invalidTarget } from '../../errors';
import * as statements from '../../repositories/grant-statements.repository';
import * as tokens from '../../repositories/token.repository';
import type { Deps } from '../deps';
import { parseScope } from '../scopes';
import type { ClientCtx } from './authorization-code.grant';
import { accessTokenJti, type TokenIssuer } from './issue-tokens';
import { createSecurityEvents } from '../security-events';
import type { AccessTokenCache } from '../access-token-cache';
import type { Resources } from '../resources.service';
import { audienceOf, createTokenTargets } from './token-target';

export interface RefreshInput {
  refresh_token: string;
  scope?: string;
  /** RFC 8707 §2.2 resource indicators (standard platforms): among those the grant named, never beyond. */
  resource?: string[];
}

/**
 * Rotates a refresh token as one compare-and-swap statement.
 * The successor is derived from the presented token (HMAC under a key derived from MASTER_KEY), so
 * a replay within REFRESH_REUSE_GRACE_SECONDS of the rotation recomputes the SAME successor and gets
 * it again with a fresh access token: a lost response or several tabs never log the user out, and
 * a thief racing the client never gets a branch of their own (RFC 9700 §4.14.2). Once the successor
 * has itself been rotated, a replay inside the window is refused without revoking anything; after
 * the window, a rotated token revokes its whole family. A `scope` narrows the access token
 * (RFC 6749 §6); scopes beyond the grant are dropped silently (spec scope rule 1). A `resource`
 * narrows the access token's audience among the resources the grant named (RFC 8707 §2.2), each
 * request anew. Throws invalid_grant, invalid_target.
 */
export function createRefreshTokenGrant(
  deps: Deps,
  issuer: TokenIssuer,
  accessTokenCache: AccessTokenCache,
  resources: Resources,
) {
  const tokenTarget = createTokenTargets(deps, resources);
  if (!deps.config.masterKey) throw new Error('the refresh token grant needs MASTER_KEY');
  const successorMac = createKeyedDigest(deps.config.masterKey, 'refresh-token-successor/v1');
  // Keyed, not a plain hash: whoever saw a rotated token must not be able to compute its successor.
  const successorOf = (presented: string) => `rt_${successorMac(presented)}`;
  const events = createSecurityEvents(deps);

  return async function rotateRefreshToken(ctx: ClientCtx, input: RefreshInput) {
    await issuer.loadKeys(ctx.platform, ctx.client);
    const refreshToken = successorOf(input.refresh_token);
    const prepared = { ...issuer.prepare(), refreshToken, refreshHash: digest(refreshToken) };
    const target = await tokenTarget(ctx.platform, input.resource, prepared.now);
    const graceStart = new Date(prepared.now.getTime() - deps.config.refreshReuseGraceSeconds * 1000);
    const row = await statements.rotateRefreshToken(deps.db, {
      platformId: ctx.platform.id,
      tokenHash: digest(input.refresh_token),
      clientId: ctx.client.id,
      graceStart,
      requestedScopes: input.scope === undefined ? null : parseScope(input.scope),
      target,
      tokens: prepared,
    });
    if (!row || row.clientId !== ctx.client.id) throw invalidGrant('The refresh token is invalid');
    if (!row.rotated) {
      if (row.familyRevokedAt) throw invalidGrant('The refresh token has been revoked');
      if (row.expiresAt <= prepared.now) throw invalidGrant('The refresh token has expired');
      // A token that would have rotated but for its resource: refused, and nothing is spent.
      if (!row.targetOk && (row.rotatedAt === null || row.rotatedAt >= graceStart)) {
        throw invalidTarget('The resource was not named in the authorization request, or is no longer registered');
      }
      // Inside the window, but the client already moved on: answering with the successor would
      // hand out a token its holder has spent, and a new one would fork the family. Refuse only.
      if (row.successorUsed) throw invalidGrant('The refresh token was already rotated and its successor used');
      // Only a rotation older than the grace window is left: reuse of a stolen or replayed token.
      // Detected by the rotation statement; the family's revocation and its audit event commit together.
      await deps.db.transaction(async (trx) => {
        const revoked = await tokens.revokeFamily(trx, row.familyId, prepared.now);
        if (ctx.audit && revoked > 0) {
          const origin = { ctx: ctx.audit, platformId: ctx.platform.id, clientId: ctx.client.id };
          await events.record(trx, origin, 'refresh_token.reuse_detected', row.user?.id ?? null, {
            family_id: row.familyId,
            rotated_at: row.rotatedAt,
          });
        }
      });
      accessTokenCache.dropFamily(row.familyId);
      deps.metrics.refreshReuse.inc();
      throw invalidGrant('The refresh token was already used; its family has been revoked');
    }
    if (!row.user) throw invalidGrant('The user no longer exists');
    // The grant's earlier access tokens are superseded by the one issued now: not kept in memory.
    accessTokenCache.dropFamily(row.familyId);
    deps.metrics.tokensIssued.inc({ grant: 'refresh_token' });
    return issuer.sign(
      { ...prepared, accessExpiresAt: row.accessExpiresAt ?? prepared.accessExpiresAt },
      {
        jti: accessTokenJti(prepared, { kind: 'family', id: row.familyId }),
        platform: ctx.platform,
        client: ctx.client,
        user: row.user,
        scope: row.accessScope!,
        audience: audienceOf(row.audience),
        authTime: row.authTime,
        amr: row.amr,
        acr: row.acr,
        browserSessionId: row.browserSessionId,
        hasRefreshToken: true,
      },
    );
  };
}
