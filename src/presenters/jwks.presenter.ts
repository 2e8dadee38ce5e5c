/** The spec's JWKS document: descriptors only, never the key material `k` (DESIGN §5). */
export function presentJwks(keys: { kid: string }[]) {
  return { keys: keys.map((k) => ({ kty: 'oct', alg: 'HS512', use: 'sig', kid: k.kid })) };
}
