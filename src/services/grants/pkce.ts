import { createHash } from 'node:crypto';
import { safeEqual } from '../../crypto/digest';
import { invalidGrant } from '../../errors';

const VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;

/**
 * RFC 7636 S256. A code issued with a challenge needs the verifier; a verifier sent for a code
 * issued without one is refused (RFC 9700 §2.1.1 downgrade protection). Throws invalid_grant.
 */
export function checkVerifierFormat(codeVerifier: string): void {
  if (!VERIFIER.test(codeVerifier)) throw invalidGrant('code_verifier is malformed');
}

export function verifyPkce(codeChallenge: string | null, codeVerifier: string | undefined): void {
  if (!codeChallenge) {
    if (codeVerifier !== undefined) throw invalidGrant('code_verifier sent for a code issued without code_challenge');
    return;
  }
  if (codeVerifier === undefined) throw invalidGrant('code_verifier is required');
  if (!VERIFIER.test(codeVerifier)) throw invalidGrant('code_verifier is malformed');
  const computed = createHash('sha256').update(codeVerifier).digest('base64url');
  if (!safeEqual(computed, codeChallenge)) throw invalidGrant('code_verifier does not match code_challenge');
}
