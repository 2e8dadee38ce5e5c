/**
 * An initial access token (RFC 7591 §3): lets its bearer register clients on a platform whose
 * registration policy is `token`. Stored as its SHA-256 digest only; shown once at creation.
 */
export interface RegistrationToken {
  id: string;
  platformId: string;
  /** null: unlimited. */
  maxUses: number | null;
  uses: number;
  /** null: never expires. */
  expiresAt: Date | null;
  createdAt: Date;
  revokedAt: Date | null;
  createdBy: string | null;
}

export type RegistrationTokenStatus = 'active' | 'exhausted' | 'expired' | 'revoked';

/** A token with its status as of the service's clock, for the admin doors. */
export type RegistrationTokenWithStatus = RegistrationToken & { status: RegistrationTokenStatus };

/** Whether the token still registers clients, else why not. */
export function registrationTokenStatus(t: RegistrationToken, now: Date): RegistrationTokenStatus {
  if (t.revokedAt) return 'revoked';
  if (t.expiresAt && t.expiresAt <= now) return 'expired';
  if (t.maxUses !== null && t.uses >= t.maxUses) return 'exhausted';
  return 'active';
}

/** `lk_reg_<id>_<secret>`: the id finds the row, the digest of the whole token is compared in constant time. */
const TOKEN = /^lk_reg_([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})_[A-Za-z0-9_-]{43}$/;

export const formatRegistrationToken = (id: string, secret: string): string => `lk_reg_${id}_${secret}`;

/** The token's id, or undefined when it is not one this server makes. */
export function registrationTokenId(token: string): string | undefined {
  return TOKEN.exec(token)?.[1];
}
