import { digest } from '../../crypto/digest';
import { invalidGrant } from '../../errors';
import * as codes from '../../repositories/authorization-code.repository';
import * as tokens from '../../repositories/token.repository';
import * as users from '../../repositories/user.repository';
import type { ClientRow } from '../../repositories/client.repository';
import type { Platform } from '../../repositories/platform.repository';
import type { Deps } from '../deps';
import { parseScope } from '../scopes';
import type { TokenIssuer } from './issue-tokens';
import type { SigningKeys } from '../signing-keys.service';
import { verifyPkce } from './pkce';

export interface CodeExchangeInput {
  code: string;
  redirect_uri: string;
  code_verifier?: string;
}

export interface ClientCtx {
  platform: Platform;
  client: ClientRow;
}

/**
 * Exchanges a code once; a replay revokes what the first exchange issued (RFC 6749 §4.1.2).
 * Throws invalid_grant.
 */
export function createAuthorizationCodeGrant(deps: Deps, keys: SigningKeys, issueTokens: TokenIssuer) {
  return async function exchangeAuthorizationCode(ctx: ClientCtx, input: CodeExchangeInput) {
    const signingKey = await keys.activeKey(ctx.platform.id);
    const outcome = await deps.db.transaction(async (trx) => {
      // FOR UPDATE: two concurrent exchanges of one code must not both succeed
      const code = await codes.findByHashForUpdate(trx, ctx.platform.id, digest(input.code));
      if (!code || code.clientId !== ctx.client.id) return { error: 'The authorization code is invalid' };
      const now = deps.now();
      if (code.consumedAt) {
        await tokens.revokeByCode(trx, code.id, now);
        return { error: 'The authorization code has already been used' };
      }
      if (code.expiresAt <= now) return { error: 'The authorization code has expired' };
      if (code.redirectUri !== input.redirect_uri) return { error: 'redirect_uri does not match the authorization request' };
      verifyPkce(code.codeChallenge, input.code_verifier);
      const user = await users.findById(trx, ctx.platform.id, code.userId);
      if (!user) return { error: 'The user no longer exists' };
      await codes.markConsumed(trx, code.id, now);
      const issued = await issueTokens(trx, {
        platformId: ctx.platform.id,
        signingKey,
        client: ctx.client,
        user,
        scopes: parseScope(code.scope),
        authTime: code.authTime,
        nonce: code.nonce,
        codeId: code.id,
        browserSessionId: code.browserSessionId,
      });
      return { issued };
    });
    // Thrown after the transaction so the replay revocation above is committed.
    if ('error' in outcome) throw invalidGrant(outcome.error!);
    return outcome.issued;
  };
}
