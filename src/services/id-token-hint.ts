import { peekHeader, verifyJwt, type Claims, type HmacKey } from '../crypto/jwt';
import type { Client } from '../domain/client';
import { issuerOf, type Platform } from '../domain/platform';
import type { Deps } from './deps';
import type { Platforms } from './platforms.service';
import type { SigningKeys } from './signing-keys.service';

/**
 * The claims of an ID token this provider issued to `client`, expired or not (OIDC Core 3.1.2.1,
 * RP-Initiated Logout §2), or undefined. HS512 ID tokens of a confidential client are keyed with
 * its secret — during a rotation's overlap also the previous one. Otherwise, seed: a public
 * client's are keyed with the platform key its kid names; standard: signed by the published key
 * its kid names, verified with that key's alg, never the header's (RFC 8725 §3.1).
 */
export async function idTokenHintClaims(
  deps: Deps,
  keys: SigningKeys,
  platforms: Platforms,
  platform: Platform,
  client: Client,
  hint: string,
): Promise<Claims | undefined> {
  const header = peekHeader(hint);
  if (!header) return undefined;
  const issuer = issuerOf(deps.config.baseUrl, platform);
  const verify = async (candidates: Array<HmacKey | undefined>, alg: string) => {
    for (const key of candidates) {
      const claims = key && (await verifyJwt(hint, key, alg, issuer, { allowExpired: true }));
      if (claims) return claims;
    }
    return undefined;
  };
  const secrets = platforms.idTokenHintKeys(client);
  if (platform.signingProfile === 'standard') {
    // A secret-keyed HS512 token names no kid; every other ID token names its published key.
    if (header.alg === 'HS512') return verify(secrets, 'HS512');
    const published = header.kid ? await keys.publicKeyById(platform.id, header.kid) : undefined;
    return published ? verify([published.key], published.alg) : undefined;
  }
  if (secrets.length) return verify(secrets, 'HS512');
  return header.kid ? verify([(await keys.keyById(platform.id, header.kid))?.secret], 'HS512') : undefined;
}
