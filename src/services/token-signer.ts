import { createHash } from 'node:crypto';
import { SignJWT } from 'jose';
import { JWT_ACCESS_TOKEN_TYP, signHs512, type Claims } from '../crypto/jwt';
import type { Client, IdTokenAlg } from '../domain/client';
import type { Platform } from '../domain/platform';
import type { Platforms } from './platforms.service';
import type { SigningKeys } from './signing-keys.service';

/** The algorithm of a client's ID tokens (and logout tokens): HS512 on seed platforms, or the client's registered one on standard platforms. */
export function idTokenAlgOf(
  platform: Pick<Platform, 'signingProfile'>,
  client: Pick<Client, 'type' | 'idTokenSignedResponseAlg'>,
): IdTokenAlg {
  if (platform.signingProfile !== 'standard') return 'HS512';
  const alg = client.idTokenSignedResponseAlg ?? 'RS256';
  // HS512 needs a shared secret: a public client (or a stale registration) falls back to the default.
  return alg === 'HS512' && client.type !== 'confidential' ? 'RS256' : alg;
}

/**
 * OIDC Core 3.1.3.6 / 3.3.2.11: the left half of the hash the JWS alg uses — SHA-256 for RS256 and
 * ES256, SHA-512 for HS512 and for EdDSA over Ed25519 (the OpenID Connect WG's reading for Ed25519).
 */
export function leftHalfHash(alg: IdTokenAlg, value: string): string {
  const hash = alg === 'RS256' || alg === 'ES256' ? 'sha256' : 'sha512';
  const full = createHash(hash).update(value).digest();
  return full.subarray(0, full.length / 2).toString('base64url');
}

/**
 * Signs the JWTs a platform issues, by profile. Seed: access tokens HS512 under
 * the platform key (kid), ID tokens HS512 under a confidential client's secret (no kid) or the
 * platform key (kid). Standard: access tokens RS256 under the platform's active key, `typ: at+jwt`
 * (RFC 9068 §2.1); ID tokens under the active key of the client's alg (kid), or HS512 under its
 * secret (no kid).
 */
export function createTokenSigner(keys: SigningKeys, platforms: Platforms) {
  async function signAsymmetric(
    platformId: string,
    alg: Exclude<IdTokenAlg, 'HS512'>,
    claims: Claims,
    typ: string,
  ): Promise<string> {
    const key = await keys.activeAsymmetricKey(platformId, alg);
    return new SignJWT(claims).setProtectedHeader({ alg, typ, kid: key.kid }).sign(key.privateKey);
  }

  return {
    /** An access token of the platform. */
    async signAccessToken(platform: Platform, claims: Claims): Promise<string> {
      if (platform.signingProfile === 'standard')
        return signAsymmetric(platform.id, 'RS256', claims, JWT_ACCESS_TOKEN_TYP);
      const key = await keys.activeKey(platform.id);
      return signHs512(claims, key.secret, key.kid);
    },

    /** An ID token — or, with `typ: 'logout+jwt'`, a logout token — signed as this client's ID tokens are. */
    async signForClient(platform: Platform, client: Client, claims: Claims, typ = 'JWT'): Promise<string> {
      const alg = idTokenAlgOf(platform, client);
      if (alg !== 'HS512') return signAsymmetric(platform.id, alg, claims, typ);
      const clientKey = platforms.clientIdTokenKey(client);
      if (clientKey) return signHs512(claims, await clientKey, undefined, typ);
      const key = await keys.activeKey(platform.id);
      return signHs512(claims, key.secret, key.kid, typ);
    },
  };
}

export type TokenSigner = ReturnType<typeof createTokenSigner>;
