import { randomUUID } from 'node:crypto';
import * as jose from 'jose';

export type AssertionAlg = 'RS256' | 'PS256' | 'ES256' | 'EdDSA';

export interface ClientKey {
  alg: AssertionAlg;
  kid: string;
  privateKey: CryptoKey;
  /** The public JWK as a client registers or publishes it. */
  publicJwk: Record<string, unknown>;
}

/** A client's signing key pair for private_key_jwt, made fresh with jose (extractable: openid-client signs with it). */
export async function clientKey(
  alg: AssertionAlg = 'RS256',
  kid = `k-${randomUUID().slice(0, 8)}`,
): Promise<ClientKey> {
  const { privateKey, publicKey } = await jose.generateKeyPair(alg, { extractable: true });
  const publicJwk = { ...(await jose.exportJWK(publicKey)), kid, alg, use: 'sig' };
  return { alg, kid, privateKey, publicJwk };
}

export const jwksOf = (...keys: ClientKey[]) => ({ keys: keys.map((k) => k.publicJwk) });

/** The claims openid-client sends (RFC 7523 §3), for a clock in seconds; override or drop (undefined) any. */
export function assertionClaims(
  clientId: string,
  aud: string | string[],
  nowSeconds: number,
  overrides: Record<string, unknown> = {},
): Record<string, unknown> {
  const claims: Record<string, unknown> = {
    iss: clientId,
    sub: clientId,
    aud,
    jti: randomUUID(),
    iat: nowSeconds,
    nbf: nowSeconds,
    exp: nowSeconds + 60,
    ...overrides,
  };
  for (const [name, value] of Object.entries(claims)) if (value === undefined) delete claims[name];
  return claims;
}

/** Signs `claims` as a client assertion with `key` (its alg and kid unless the header says otherwise). */
export function signAssertion(
  key: Pick<ClientKey, 'alg' | 'kid' | 'privateKey'>,
  claims: Record<string, unknown>,
  header: Record<string, unknown> = {},
): Promise<string> {
  return new jose.CompactSign(new TextEncoder().encode(JSON.stringify(claims)))
    .setProtectedHeader({ alg: key.alg, kid: key.kid, ...header })
    .sign(key.privateKey);
}

/** An unsecured JWT (RFC 7519 §6: alg none, empty signature): never to be accepted. */
export function unsignedAssertion(claims: Record<string, unknown>): string {
  const part = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
  return `${part({ alg: 'none' })}.${part(claims)}.`;
}

/** An HS256 assertion keyed with `secret` (client_secret_jwt), never accepted for a client with keys. */
export function hmacAssertion(claims: Record<string, unknown>, secret: string): Promise<string> {
  return new jose.SignJWT(claims as jose.JWTPayload)
    .setProtectedHeader({ alg: 'HS256' })
    .sign(new TextEncoder().encode(secret));
}

export const JWT_BEARER = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';
