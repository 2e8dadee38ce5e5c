import { createHash } from 'node:crypto';
import { digest } from '../../crypto/digest';
import { invalidGrant } from '../../errors';
import * as statements from '../../repositories/grant-statements.repository';
import * as tokens from '../../repositories/token.repository';
import type { AuditContext } from '../../domain/audit';
import type { Client } from '../../domain/client';
import type { Platform } from '../../domain/platform';
import type { Deps } from '../deps';
import type { TokenIssuer } from './issue-tokens';
import { checkVerifierFormat, verifyPkce } from './pkce';

export interface CodeExchangeInput {
  code: string;
  redirect_uri: string;
  code_verifier?: string;
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
 * Throws invalid_grant.
 */
export function createAuthorizationCodeGrant(deps: Deps, issuer: TokenIssuer) {
  return async function exchangeAuthorizationCode(ctx: ClientCtx, input: CodeExchangeInput) {
    if (input.code_verifier !== undefined) checkVerifierFormat(input.code_verifier);
    await issuer.loadKeys(ctx.platform, ctx.client);
    const prepared = issuer.prepare();
    const challenge = input.code_verifier === undefined ? null : createHash('sha256').update(input.code_verifier).digest('base64url');
    const row = await statements.exchangeCode(deps.db, {
      platformId: ctx.platform.id,
      codeHash: digest(input.code),
      clientId: ctx.client.id,
      redirectUri: input.redirect_uri,
      challenge,
      tokens: prepared,
    });
    if (!row || row.clientId !== ctx.client.id) throw invalidGrant('The authorization code is invalid');
    if (!row.exchanged) {
      if (row.consumedAt) {
        await tokens.revokeByCode(deps.db, row.id, prepared.now);
        throw invalidGrant('The authorization code has already been used');
      }
      if (row.expiresAt <= prepared.now) throw invalidGrant('The authorization code has expired');
      if (row.redirectUri !== input.redirect_uri) throw invalidGrant('redirect_uri does not match the authorization request');
      verifyPkce(row.codeChallenge, input.code_verifier); // throws the precise PKCE failure
      throw invalidGrant('The authorization code is invalid');
    }
    if (!row.user) throw invalidGrant('The user no longer exists');
    deps.metrics.tokensIssued.inc({ grant: 'authorization_code' });
    return issuer.sign(prepared, {
      platform: ctx.platform,
      client: ctx.client,
      user: row.user,
      scope: row.scope,
      authTime: row.authTime,
      amr: row.amr,
      acr: row.acr,
      nonce: row.nonce,
      browserSessionId: row.browserSessionId,
      hasRefreshToken: row.hasRefreshToken,
    });
  };
}
