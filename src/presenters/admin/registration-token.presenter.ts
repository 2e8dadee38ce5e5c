import type { z } from 'zod';
import type { RegistrationToken as Wire } from '../../wire/admin/registration-tokens.schemas';
import type { RegistrationTokenWithStatus } from '../../domain/registration-token';

/** A registration token as operators see it (never the token). */
export function presentRegistrationToken(t: RegistrationTokenWithStatus): z.infer<typeof Wire> {
  return {
    id: t.id,
    platform_guid: t.platformId,
    status: t.status,
    max_uses: t.maxUses,
    uses: t.uses,
    expires_at: t.expiresAt?.toISOString() ?? null,
    created_at: t.createdAt.toISOString(),
    revoked_at: t.revokedAt?.toISOString() ?? null,
    created_by: t.createdBy,
  };
}
