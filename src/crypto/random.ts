import { randomBytes, randomUUID } from 'node:crypto';

export const newId = (): string => randomUUID();

/** base64url of n random bytes. */
export const randomToken = (bytes: number): string => randomBytes(bytes).toString('base64url');

/** Opaque refresh token: `rt_` + 256 bits (spec). */
export const newRefreshToken = (): string => `rt_${randomToken(32)}`;

/** Authorization code: 256 bits. */
export const newAuthorizationCode = (): string => randomToken(32);

/** Client secret: 64 random octets, as OIDC Core 16.19 asks for HS512. */
export const newClientSecret = (): string => randomToken(64);

/** HS512 signing key material: 64 random bytes. */
export const newSigningKeyBytes = (): Buffer => randomBytes(64);
