import { peekKid, verifyHs512 } from '../crypto/jwt';
import type { Client } from '../domain/client';
import type { Platform } from '../domain/platform';
import type { Deps } from './deps';
import type { Platforms } from './platforms.service';
import type { SigningKeys } from './signing-keys.service';

/**
 * The claims of an ID token this provider issued to `client`, expired or not (OIDC Core 3.1.2.1,
 * RP-Initiated Logout §2), or undefined. A confidential client's ID tokens are keyed with its
 * secret — during a rotation's overlap also the previous one —, a public client's with the
 * platform key its kid names.
 */
export async function idTokenHintClaims(deps: Deps, keys: SigningKeys, platforms: Platforms, platform: Platform, client: Client, hint: string) {
  const secrets = platforms.idTokenHintKeys(client);
  const kid = peekKid(hint);
  const candidates = secrets.length ? secrets : kid ? [(await keys.keyById(platform.id, kid))?.secret] : [];
  for (const key of candidates) {
    const claims = key && (await verifyHs512(hint, key, deps.config.baseUrl, { allowExpired: true }));
    if (claims) return claims;
  }
  return undefined;
}
