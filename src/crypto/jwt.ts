import { createHmac, KeyObject } from 'node:crypto';
import { jwtVerify, decodeProtectedHeader, errors, type JWTPayload } from 'jose';

export type Claims = JWTPayload & Record<string, unknown>;
export type HmacKey = CryptoKey | Uint8Array;

/** Imports HS512 key bytes once; jose signs with a CryptoKey without re-importing it per call. */
export function importHs512Key(bytes: Uint8Array): Promise<CryptoKey> {
  return crypto.subtle.importKey('raw', new Uint8Array(bytes), { name: 'HMAC', hash: 'SHA-512' }, false, [
    'sign',
    'verify',
  ]);
}

const keyObjects = new WeakMap<CryptoKey, KeyObject>();
function hmacKeyOf(key: HmacKey): KeyObject | Uint8Array {
  if (key instanceof Uint8Array) return key;
  let found = keyObjects.get(key);
  if (!found) keyObjects.set(key, (found = KeyObject.from(key)));
  return found;
}

const base64urlJson = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

/**
 * An HS512 compact JWS (RFC 7515 §7.1, RFC 7519); `kid` only when the key is a platform key.
 * Signed with node:crypto's HMAC in the calling thread: jose signs through WebCrypto,
 * whose every HMAC is a job on libuv's thread pool, and the hop cost more than the hash (a
 * refresh signs two tokens). Verification stays jose's.
 */
export async function signHs512(claims: Claims, key: HmacKey, kid?: string, typ = 'JWT'): Promise<string> {
  const signingInput = `${base64urlJson(kid ? { alg: 'HS512', typ, kid } : { alg: 'HS512', typ })}.${base64urlJson(claims)}`;
  return `${signingInput}.${createHmac('sha512', hmacKeyOf(key)).update(signingInput).digest('base64url')}`;
}

/** The JOSE `typ` of a JWT access token (RFC 9068 §2.1): what the standard profile's access tokens carry. */
export const JWT_ACCESS_TOKEN_TYP = 'at+jwt';

export interface VerifyOptions {
  allowExpired?: boolean;
  /** The `typ` header the token must carry (compared as RFC 9068 §4 asks: case-insensitive, `application/` optional). */
  typ?: string;
}

/** Verifies signature, alg and exp; returns undefined for anything invalid. */
export function verifyHs512(
  token: string,
  key: HmacKey,
  issuer: string,
  options: VerifyOptions = {},
): Promise<Claims | undefined> {
  return verifyJwt(token, key, 'HS512', issuer, options);
}

/**
 * Verifies a JWT under `key` with exactly `alg` — the key's algorithm, never the header's choice,
 * so `none` and an HS512 header over a public key are refused (RFC 8725 §2.1, §3.1) — plus `iss`
 * and `exp` (and `typ` when asked); returns undefined for anything invalid.
 */
export async function verifyJwt(
  token: string,
  key: HmacKey,
  alg: string,
  issuer: string,
  options: VerifyOptions = {},
): Promise<Claims | undefined> {
  try {
    // allowExpired: id_token_hint may be expired (OIDC Core 3.1.2.1); a century of tolerance ignores exp
    const { payload } = await jwtVerify(token, key, {
      algorithms: [alg],
      issuer,
      typ: options.typ,
      clockTolerance: options.allowExpired ? 3_153_600_000 : 0,
    });
    return payload as Claims;
  } catch (err) {
    if (err instanceof errors.JOSEError || err instanceof TypeError) return undefined;
    throw err;
  }
}

/** The `kid` of a compact JWS, or undefined when it is not one. */
export function peekKid(token: string): string | undefined {
  try {
    const { kid } = decodeProtectedHeader(token);
    return typeof kid === 'string' ? kid : undefined;
  } catch {
    return undefined;
  }
}

/** The `alg` and `kid` of a compact JWS (unverified: to pick the key, never to trust), or undefined. */
export function peekHeader(token: string): { alg?: string; kid?: string } | undefined {
  try {
    const { alg, kid } = decodeProtectedHeader(token);
    return { alg: typeof alg === 'string' ? alg : undefined, kid: typeof kid === 'string' ? kid : undefined };
  } catch {
    return undefined;
  }
}

/**
 * Whether a verified JWT is an access token rather than an ID token. Seed: for a public client both
 * are HS512 under the platform key; standard: an RS256 client's ID tokens and every access token
 * share the RS256 key; so the signature cannot tell them apart (RFC 8725 §2.8, §3.11).
 * A standard access token says so in its header, `typ: at+jwt` (RFC 9068 §2.1). A seed access token
 * keeps `typ: JWT` (the spec fixes it; common resource-server libraries — Nimbus, hence Spring —
 * refuse any other `typ` by default) but carries `client_id`, `scope` and `token_type`, which an ID
 * token never does (OIDC Core §2 names the client `azp`).
 */
export function isAccessTokenJwt(token: string, claims: Claims): boolean {
  let typ: unknown;
  try {
    typ = decodeProtectedHeader(token).typ;
  } catch {
    return false;
  }
  return (
    (typeof typ === 'string' && typ.toLowerCase().replace(/^application\//, '') === JWT_ACCESS_TOKEN_TYP) ||
    'client_id' in claims ||
    'scope' in claims ||
    'token_type' in claims
  );
}
