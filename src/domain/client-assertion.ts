import { issuerOf, type Platform } from './platform';

/**
 * Client authentication with private_key_jwt (RFC 7523 §2.2 and §3, OIDC Core §9): the pure rules.
 * The service that applies them is src/services/client-assertion/ (docs/decisions.md, "Machine and
 * device clients").
 */

/** RFC 7523 §2.2: the one client_assertion_type accepted. */
export const JWT_BEARER_ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

/** Signed with a client's public-key pair only: never `none`, never HS* (a client with keys has no shared secret). */
export const CLIENT_ASSERTION_ALGS = ['RS256', 'PS256', 'ES256', 'EdDSA'] as const;
export type ClientAssertionAlg = (typeof CLIENT_ASSERTION_ALGS)[number];
export const isClientAssertionAlg = (alg: unknown): alg is ClientAssertionAlg =>
  typeof alg === 'string' && (CLIENT_ASSERTION_ALGS as readonly string[]).includes(alg);

/** An assertion lives at most this long (exp − iat, and exp ahead of our clock): it bounds replay storage and theft. */
export const CLIENT_ASSERTION_MAX_LIFETIME_SECONDS = 300;
/** Clocks of client and server may differ by this much, either way (exp, iat, nbf). */
export const CLIENT_ASSERTION_CLOCK_SKEW_SECONDS = 30;
/** Longer than any real assertion (an RSA-4096 signature with its claims is under 2 KB). */
export const CLIENT_ASSERTION_MAX_LENGTH = 8192;
const JTI_MAX_LENGTH = 256;

export type Jwk = Record<string, unknown>;

/** JWK members of a private or symmetric key (RFC 7518 §6): a published set must not hold them. */
export const PRIVATE_JWK_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'];

/**
 * Whether `jwk` may verify a signature made with `alg`: its type and curve fit the algorithm
 * (RFC 7518 §3, RFC 8037 §3.1), and its own `alg`, `use` and `key_ops`, when present, allow it.
 */
export function keyFitsAlg(jwk: Jwk, alg: ClientAssertionAlg): boolean {
  if (jwk.alg !== undefined && jwk.alg !== alg) return false;
  if (jwk.use !== undefined && jwk.use !== 'sig') return false;
  if (jwk.key_ops !== undefined && !(Array.isArray(jwk.key_ops) && jwk.key_ops.includes('verify'))) return false;
  if (PRIVATE_JWK_MEMBERS.some((m) => m in jwk)) return false;
  switch (alg) {
    case 'RS256':
    case 'PS256':
      return jwk.kty === 'RSA';
    case 'ES256':
      return jwk.kty === 'EC' && jwk.crv === 'P-256';
    case 'EdDSA':
      return jwk.kty === 'OKP' && jwk.crv === 'Ed25519';
  }
}

/**
 * The `aud` values that name this server (RFC 7523 §3 item 3, OIDC Core §9): its issuer, and its
 * token endpoint in both forms a standard platform serves (under the issuer, and by query string).
 */
export function assertionAudiences(baseUrl: string, platform: Pick<Platform, 'id' | 'signingProfile'>): string[] {
  const issuer = issuerOf(baseUrl, platform);
  return [issuer, `${issuer}/oauth/token`, `${baseUrl}/oauth/token?platform_guid=${encodeURIComponent(platform.id)}`];
}

const isNumericDate = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

/**
 * What is wrong with an assertion's claims (RFC 7523 §3), or undefined: `iss` and `sub` the
 * client's wire id, `aud` one of ours (a string, or a list holding one), `exp` present, not past and
 * not further ahead than the lifetime allows, `iat` and `nbf` not in the future, `jti` present.
 * The signature is checked elsewhere; `nowSeconds` is the server's clock.
 */
export function assertionClaimsProblem(
  claims: Record<string, unknown>,
  expected: { clientId: string; audiences: string[]; nowSeconds: number },
): string | undefined {
  const { clientId, audiences, nowSeconds: now } = expected;
  const skew = CLIENT_ASSERTION_CLOCK_SKEW_SECONDS;
  const max = CLIENT_ASSERTION_MAX_LIFETIME_SECONDS;
  if (claims.iss !== clientId) return 'iss must be the client_id';
  if (claims.sub !== clientId) return 'sub must be the client_id';
  const aud = claims.aud;
  const auds = typeof aud === 'string' ? [aud] : Array.isArray(aud) ? aud : [];
  if (!auds.some((a) => typeof a === 'string' && audiences.includes(a)))
    return `aud must be this server's issuer (${audiences[0]}) or its token endpoint (${audiences[1]})`;
  if (!isNumericDate(claims.exp)) return 'exp is required (a NumericDate)';
  if (claims.exp <= now - skew) return 'the assertion has expired (exp)';
  if (claims.iat !== undefined) {
    if (!isNumericDate(claims.iat)) return 'iat must be a NumericDate';
    if (claims.iat > now + skew) return 'iat is in the future';
    if (claims.exp - claims.iat > max) return `the assertion lives longer than ${max} seconds (exp − iat)`;
  }
  // Without iat too: no assertion is accepted that stays usable for longer than the limit from now.
  if (claims.exp > now + max + skew) return `exp is too far ahead: an assertion may live at most ${max} seconds`;
  if (claims.nbf !== undefined) {
    if (!isNumericDate(claims.nbf)) return 'nbf must be a NumericDate';
    if (claims.nbf > now + skew) return 'the assertion is not valid yet (nbf)';
  }
  if (typeof claims.jti !== 'string' || claims.jti.length === 0)
    return 'jti is required (a unique identifier for each assertion)';
  if (claims.jti.length > JTI_MAX_LENGTH) return `jti must be at most ${JTI_MAX_LENGTH} characters`;
  return undefined;
}
