/** Signing algorithms of platform keys: HS512 for every platform (the spec's), the others for `standard` ones. */
export const SIGNING_ALGS = ['HS512', 'RS256', 'ES256', 'EdDSA'] as const;
export type SigningAlg = (typeof SIGNING_ALGS)[number];

/** A `standard` platform has one active key of each of these. */
export const ASYMMETRIC_ALGS = ['RS256', 'ES256', 'EdDSA'] as const;
export type AsymmetricAlg = (typeof ASYMMETRIC_ALGS)[number];

export const isAsymmetricAlg = (alg: string): alg is AsymmetricAlg =>
  (ASYMMETRIC_ALGS as readonly string[]).includes(alg);

/** The members a published public JWK may carry, per key type (RFC 7517/7518/8037): never d, p, q, dp, dq, qi, k. */
export const PUBLIC_JWK_MEMBERS: Readonly<Record<string, readonly string[]>> = {
  RSA: ['kty', 'n', 'e'],
  EC: ['kty', 'crv', 'x', 'y'],
  OKP: ['kty', 'crv', 'x'],
};
