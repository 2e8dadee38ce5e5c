import { createHash } from 'node:crypto';
import { digest } from '../../crypto/digest';
import { invalidGrant, invalidTarget } from '../../errors';
import * as statements from '../../repositories/grant-statements.repository';
import * as tokens from '../../repositories/token.repository';
import type { AuditContext } from '../../domain/audit';
import type { Client } from '../../domain/client';
import type { Platform } from '../../domain/platform';
import type { Deps } from '../deps';
import { accessTokenJti, type TokenIssuer } from './issue-tokens';
import { checkVerifierFormat, verifyPkce } from './pkce';
import type { Resources } from '../resources.service';
import { audienceOf, createTokenTargets } from './token-target';

export interface CodeExchangeInput {
  code: string;
  redirect_uri: string;
  code_verifier?: string;
  /** RFC 8707 §2.2 resource indicators (standard platforms): among those the authorization request named. */
  resource?: string[];
}

export interface ClientCtx {
  platform: Platform;
  client: Client;
  /** The request, for the audit log (a refresh token reuse is recorded with it). */
  audit?: AuditContext;
}

/**
 * Exchanges a code once, in one statement that locks the code and consumes it only when every
 * binding holds; a replay revokes what the first exchange issued (RFC 6749 §4.1.2).
 * The access token's audience is the resources the request named, or those of them `resource`
 * names (RFC 8707 §2.2), with the shortest of their lifetimes. Throws invalid_grant, invalid_target.
 */
export function createAuthorizationCodeGrant(deps: Deps, issuer: TokenIssuer, resources: Resources) {
  const tokenTarget = createTokenTargets(deps, resources);
  return async function exchangeAuthorizationCode(ctx: ClientCtx, input: CodeExchangeInput) {
    if (input.code_verifier !== undefined) checkVerifierFormat(input.code_verifier);
    await issuer.loadKeys(ctx.platform, ctx.client);
    const prepared = issuer.prepare();
    const target = await tokenTarget(ctx.platform, input.resource, prepared.now);
    const challenge =
      input.code_verifier === undefined ? null : createHash('sha256').update(input.code_verifier).digest('base64url');
    const row = await statements.exchangeCode(deps.db, {
      platformId: ctx.platform.id,
      codeHash: digest(input.code),
      clientId: ctx.client.id,
      redirectUri: input.redirect_uri,
      challenge,
      target,
      tokens: prepared,
    });
    if (!row || row.clientId !== ctx.client.id) throw invalidGrant('The authorization code is invalid');
    if (!row.exchanged) {
      if (row.consumedAt) {
        await tokens.revokeByCode(deps.db, row.id, prepared.now);
        throw invalidGrant('The authorization code has already been used');
      }
      if (row.expiresAt <= prepared.now) throw invalidGrant('The authorization code has expired');
      if (row.redirectUri !== input.redirect_uri)
        throw invalidGrant('redirect_uri does not match the authorization request');
      verifyPkce(row.codeChallenge, input.code_verifier); // throws the precise PKCE failure
      // The code stays unspent: the client may ask again for a resource the request named.
      if (!row.targetOk)
        throw invalidTarget('The resource was not named in the authorization request, or is no longer registered');
      throw invalidGrant('The authorization code is invalid');
    }
    if (!row.user) throw invalidGrant('The user no longer exists');
    deps.metrics.tokensIssued.inc({ grant: 'authorization_code' });
    return issuer.sign(
      { ...prepared, accessExpiresAt: row.accessExpiresAt ?? prepared.accessExpiresAt },
      {
        // With a refresh token it lives by the family; without, by the code (docs/decisions.md, "Access tokens without a row").
        jti: accessTokenJti(
          prepared,
          row.hasRefreshToken ? { kind: 'family', id: prepared.familyId } : { kind: 'code', id: row.id },
        ),
        platform: ctx.platform,
        client: ctx.client,
        user: row.user,
        scope: row.scope,
        audience: audienceOf(row.audience),
        authTime: row.authTime,
        amr: row.amr,
        acr: row.acr,
        nonce: row.nonce,
        browserSessionId: row.browserSessionId,
        hasRefreshToken: row.hasRefreshToken,
      },
    );
  };
}
