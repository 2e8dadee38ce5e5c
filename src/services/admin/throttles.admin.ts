import type { AdminActor } from '../../domain/admin';
import { normalizeEmail } from '../../domain/user';
import * as throttles from '../../repositories/attempt-throttle.repository';
import type { Deps } from '../deps';
import type { Audit } from '../audit.service';
import type { AttemptThrottle, ThrottleEntry } from '../attempt-throttle.service';
import { assertGlobal } from './access';
import type { PlatformsAdmin } from './platforms.admin';

export interface ThrottleSelection {
  email?: string;
  source?: string;
}

/** Sign-in and sign-up throttles as operators read and clear them (unlocking an account or a source); clears audited. */
export function createThrottlesAdmin(deps: Deps, platforms: PlatformsAdmin, throttle: AttemptThrottle, audit: Audit) {
  return {
    /** Keys in force of one platform, or (global actors, platformId null) of every platform. */
    async list(
      actor: AdminActor,
      platformId: string | null,
      filter: ThrottleSelection & { lockedOnly?: boolean },
    ): Promise<ThrottleEntry[]> {
      if (platformId === null) assertGlobal(actor, 'listing the throttles of every platform');
      else await platforms.get(actor, platformId);
      return throttle.listThrottles({ ...filter, platformId: platformId ?? undefined });
    },

    /**
     * Clears the platform's throttles of an email (its sign-in keys), a source, both, or all of
     * them (an empty selection); returns how many keys went. One throttle.cleared event when any did.
     */
    async clear(actor: AdminActor, platformId: string, select: ThrottleSelection): Promise<number> {
      await platforms.get(actor, platformId);
      const entries = await throttle.listThrottles({ platformId, email: select.email, source: select.source });
      if (entries.length === 0) return 0;
      await deps.db.transaction(async (trx) => {
        await throttles.deleteKeys(
          trx,
          entries.map((e) => e.key),
        );
        await audit.record(trx, actor, {
          kind: 'throttle.cleared',
          platformId,
          // An email is not a secret (domain/audit.ts); the keys say which throttles (account, source).
          details: {
            ...(select.email ? { email: normalizeEmail(select.email) } : {}),
            ...(select.source ? { source: select.source } : {}),
            ...(select.email || select.source ? {} : { all: true }),
            cleared: entries.length,
            kinds: [...new Set(entries.map((e) => e.kind))],
          },
        });
      });
      return entries.length;
    },
  };
}

export type ThrottlesAdmin = ReturnType<typeof createThrottlesAdmin>;
