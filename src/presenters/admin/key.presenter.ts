import type { z } from 'zod';
import type { KeyRotated, SigningKey } from '../../wire/admin/keys.schemas';
import type { AdminSigningKey, KeyRotation } from '../../services/admin/keys.admin';

/** A signing key's descriptor and life: never its key material. */
export function presentKey(k: AdminSigningKey): z.infer<typeof SigningKey> {
  // HS512 keys answer exactly as before signing profiles (they never wait to sign).
  return {
    kid: k.kid,
    alg: k.alg,
    status: k.status,
    created_at: k.createdAt.toISOString(),
    ...(k.alg === 'HS512' ? {} : { activates_at: k.activatesAt?.toISOString() ?? null }),
    rotated_at: k.rotatedAt?.toISOString() ?? null,
    retired_at: k.retiredAt?.toISOString() ?? null,
  };
}

export function presentKeyRotated(platformId: string, r: KeyRotation): z.infer<typeof KeyRotated> {
  // HS512 rotations answer exactly as before signing profiles; other algs name theirs and when the new key signs.
  const out = { platform_guid: platformId, kid: r.kid, previous_kid: r.previousKid };
  return r.alg !== 'HS512'
    ? { ...out, alg: r.alg, ...(r.activatesAt ? { activates_at: r.activatesAt.toISOString() } : {}) }
    : out;
}
