import type { z } from 'zod';
import type { KeyRotated, SigningKey } from '../../services/admin/schemas/keys.schemas';
import type { AdminSigningKey } from '../../services/admin/keys.admin';

/** A signing key's descriptor and life: never its key material. */
export function presentKey(k: AdminSigningKey): z.infer<typeof SigningKey> {
  return {
    kid: k.kid,
    alg: k.alg,
    status: k.status,
    created_at: k.createdAt.toISOString(),
    rotated_at: k.rotatedAt?.toISOString() ?? null,
    retired_at: k.retiredAt?.toISOString() ?? null,
  };
}

export function presentKeyRotated(platformId: string, r: { kid: string; previousKid: string | null; alg: z.infer<typeof KeyRotated>['alg'] }): z.infer<typeof KeyRotated> {
  // HS512 rotations answer exactly as before signing profiles; other algs name theirs.
  const out = { platform_guid: platformId, kid: r.kid, previous_kid: r.previousKid };
  return r.alg && r.alg !== 'HS512' ? { ...out, alg: r.alg } : out;
}
