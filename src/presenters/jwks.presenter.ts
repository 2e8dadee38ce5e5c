import { PUBLIC_JWK_MEMBERS } from '../domain/signing-key';

/** The spec's JWKS document: descriptors only, never the key material `k`. */
export function presentJwks(keys: { kid: string }[]) {
  return { keys: keys.map((k) => ({ kty: 'oct', alg: 'HS512', use: 'sig', kid: k.kid })) };
}

/**
 * A `standard` platform's JWKS: public keys only — each a JWK of the public members of
 * its kty (RSA n/e, EC crv/x/y, OKP crv/x) with `kid`, `use` and `alg`; never a private or `oct` member.
 */
export function presentPublicJwks(keys: { kid: string; alg: string; publicJwk: Record<string, string> }[]) {
  const allowed: Record<string, readonly string[]> = PUBLIC_JWK_MEMBERS;
  return {
    keys: keys
      .filter((k) => allowed[k.publicJwk.kty])
      .map((k) => ({
        ...Object.fromEntries(allowed[k.publicJwk.kty].map((m) => [m, k.publicJwk[m]])),
        kid: k.kid,
        use: 'sig',
        alg: k.alg,
      })),
  };
}
