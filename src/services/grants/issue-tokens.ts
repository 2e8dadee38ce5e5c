import { createHash } from 'node:crypto';
import { digest } from '../../crypto/digest';
import { newId, newRefreshToken, randomToken } from '../../crypto/random';
import { signHs512 } from '../../crypto/jwt';
import type { Queryable } from '../../db';
import * as tokens from '../../repositories/token.repository';
import type { ClientRow } from '../../repositories/client.repository';
import type { UserRow } from '../../repositories/user.repository';
import { idTokenUserClaims } from '../../presenters/claims.presenter';
import type { IssuedTokens } from '../../presenters/token.presenter';
import type { Deps } from '../deps';
import type { Platforms } from '../platforms.service';
import type { SigningKey } from '../signing-keys.service';
import { formatScope } from '../scopes';

export interface IssueInput {
  platformId: string;
  client: ClientRow;
  user: UserRow;
  scopes: string[];
  authTime: Date;
  nonce?: string | null;
  codeId?: string | null;
  /** Continue an existing refresh family (rotation) instead of starting one. */
  familyId?: string;
  browserSessionId?: string | null;
  /** The platform's active key, resolved BEFORE the transaction: a pool query inside it could starve the pool. */
  signingKey: SigningKey;
}

const seconds = (d: Date) => Math.floor(d.getTime() / 1000);

/** OIDC Core 3.1.3.6: left half of the hash matching the ID token's alg (SHA-512 for HS512). */
const atHash = (accessToken: string) => createHash('sha512').update(accessToken).digest().subarray(0, 32).toString('base64url');

export function createTokenIssuer(deps: Deps, platforms: Platforms) {
  /** Access token (+ record), ID token when openid, refresh token when offline_access. Pass the transaction. */
  return async function issueTokens(trx: Queryable, input: IssueInput): Promise<IssuedTokens> {
    const now = deps.now();
    const iat = seconds(now);
    const ttl = deps.config.accessTokenTtlSeconds;
    const scope = formatScope(input.scopes);
    const { baseUrl } = deps.config;
    const key = input.signingKey;

    let refreshToken: string | undefined;
    let familyId = input.familyId ?? null;
    if (input.scopes.includes('offline_access')) {
      if (!familyId) {
        familyId = newId();
        await tokens.insertFamily(trx, {
          id: familyId,
          platformId: input.platformId,
          clientId: input.client.id,
          userId: input.user.id,
          codeId: input.codeId ?? null,
          scope,
          authTime: input.authTime,
          browserSessionId: input.browserSessionId ?? null,
        });
      }
      refreshToken = newRefreshToken();
      await tokens.insertRefreshToken(trx, {
        id: newId(),
        familyId,
        tokenHash: digest(refreshToken),
        expiresAt: new Date(now.getTime() + deps.config.refreshTokenTtlSeconds * 1000),
      });
    }

    const jti = randomToken(18);
    const accessToken = await signHs512(
      { iss: baseUrl, sub: input.user.id, human_guid: input.user.id, aud: input.client.id, client_id: input.client.id, scope, jti, iat, exp: iat + ttl, token_type: 'Bearer' },
      key.secret,
      key.kid,
    );
    await tokens.insertAccessToken(trx, {
      jtiHash: digest(jti),
      platformId: input.platformId,
      clientId: input.client.id,
      userId: input.user.id,
      scope,
      familyId,
      codeId: input.codeId ?? null,
      expiresAt: new Date((iat + ttl) * 1000),
      createdAt: now,
    });

    let idToken: string | undefined;
    if (input.scopes.includes('openid')) {
      const claims = {
        ...idTokenUserClaims(input.user, input.scopes, baseUrl),
        iss: baseUrl,
        aud: input.client.id,
        azp: input.client.id,
        iat,
        exp: iat + ttl,
        auth_time: seconds(input.authTime),
        at_hash: atHash(accessToken),
        ...(input.nonce ? { nonce: input.nonce } : {}),
      };
      // DESIGN §5: confidential clients get an ID token keyed with their secret and no kid.
      const clientKey = platforms.clientIdTokenKey(input.client);
      idToken = clientKey ? await signHs512(claims, await clientKey) : await signHs512(claims, key.secret, key.kid);
    }
    return { accessToken, expiresInSeconds: ttl, scope, idToken, refreshToken };
  };
}

export type TokenIssuer = ReturnType<typeof createTokenIssuer>;
