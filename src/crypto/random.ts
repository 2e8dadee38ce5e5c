import { randomBytes, randomUUID } from 'node:crypto';
import { v7 as uuidv7 } from 'uuid';

export const newId = (): string => randomUUID();

/**
 * A time-ordered id (UUIDv7, RFC 9562 §5.7: a millisecond timestamp, then 74 random bits) for the
 * rows every grant writes (codes, refresh-token families, refresh tokens): each new key lands on
 * the last page of its index instead of a random one, so the index pages a grant touches stay few
 * and in memory however large the table grows (docs/decisions.md, "Time-ordered ids for grants").
 * Not for ids that must not tell when they were made.
 */
export const newTimeOrderedId = (): string => uuidv7();

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
