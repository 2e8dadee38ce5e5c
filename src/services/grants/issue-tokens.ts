import { createHash } from 'node:crypto';
import { digest } from '../../crypto/digest';
import { newId, newRefreshToken, randomToken } from '../../crypto/random';
import { signHs512 } from '../../crypto/jwt';
import type { Client } from '../../domain/client';
import type { User } from '../../domain/user';
import { idTokenUserClaims } from '../../domain/claims';
import type { IssuedTokens, PreparedTokens } from '../../domain/tokens';
import type { Deps } from '../deps';
import type { Platforms } from '../platforms.service';
import type { SigningKey } from '../signing-keys.service';

export type { PreparedTokens };

export interface SignInput {
  client: Client;
  user: User;
  scope: string;
  authTime: Date;
  /** How the user signed in (RFC 8176, space-separated) and the acr reached; null for codes issued before issue 13. */
  amr?: string | null;
  acr?: string | null;
  nonce?: string | null;
  hasRefreshToken: boolean;
  signingKey: SigningKey;
}

const seconds = (d: Date) => Math.floor(d.getTime() / 1000);

/** OIDC Core 3.1.3.6: left half of the hash matching the ID token's alg (SHA-512 for HS512). */
const atHash = (accessToken: string) => createHash('sha512').update(accessToken).digest().subarray(0, 32).toString('base64url');

export function createTokenIssuer(deps: Deps, platforms: Platforms) {
  return {
    prepare(): PreparedTokens {
      const now = deps.now();
      const jti = randomToken(18);
      const refreshToken = newRefreshToken();
      return {
        now,
        jti,
        jtiHash: digest(jti),
        accessExpiresAt: new Date((seconds(now) + deps.config.accessTokenTtlSeconds) * 1000),
        familyId: newId(),
        refreshId: newId(),
        refreshToken,
        refreshHash: digest(refreshToken),
        refreshExpiresAt: new Date(now.getTime() + deps.config.refreshTokenTtlSeconds * 1000),
      };
    },

    /** The access token, the ID token when openid was granted, and the refresh token when stored. */
    async sign(prepared: PreparedTokens, input: SignInput): Promise<IssuedTokens> {
      const { baseUrl } = deps.config;
      const iat = seconds(prepared.now);
      const exp = seconds(prepared.accessExpiresAt);
      const scopes = input.scope.split(' ');
      const key = input.signingKey;
      const accessToken = await signHs512(
        { iss: baseUrl, sub: input.user.id, human_guid: input.user.id, aud: input.client.id, client_id: input.client.id, scope: input.scope, jti: prepared.jti, iat, exp, token_type: 'Bearer' },
        key.secret,
        key.kid,
      );
      let idToken: string | undefined;
      if (scopes.includes('openid')) {
        const claims = {
          ...idTokenUserClaims(input.user, scopes, baseUrl),
          iss: baseUrl,
          aud: input.client.id,
          azp: input.client.id,
          iat,
          exp,
          auth_time: seconds(input.authTime),
          at_hash: atHash(accessToken),
          ...(input.nonce ? { nonce: input.nonce } : {}),
          // OIDC Core 2 / RFC 8176; DESIGN §15: additions to the seed profile's claims.
          ...(input.amr ? { amr: input.amr.split(' ') } : {}),
          ...(input.acr ? { acr: input.acr } : {}),
        };
        // DESIGN §5: confidential clients get an ID token keyed with their secret and no kid.
        const clientKey = platforms.clientIdTokenKey(input.client);
        idToken = clientKey ? await signHs512(claims, await clientKey) : await signHs512(claims, key.secret, key.kid);
      }
      return {
        accessToken,
        expiresInSeconds: exp - iat,
        scope: input.scope,
        idToken,
        refreshToken: input.hasRefreshToken ? prepared.refreshToken : undefined,
      };
    },
  };
}

export type TokenIssuer = ReturnType<typeof createTokenIssuer>;
