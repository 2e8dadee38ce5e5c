import { createHash } from 'node:crypto';
import * as throttles from '../../repositories/attempt-throttle.repository';
import { normalizeEmail } from '../../domain/user';
import { afterAttempt, lockedSeconds, SIGN_IN_ACCOUNT_SOURCE } from '../attempt-throttle.service';
import type { Queryable } from '../../db';
import type { Deps } from '../deps';

const hash = (s: string) => createHash('sha256').update(s).digest('base64url');

/**
 * Second-factor guessing defence: wrong codes are counted per account and source with the
 * password policy (5 in 15 minutes lock for a minute, doubling), on a key of the sign-in throttle's
 * shape (`mfa:account:<platform>:<sha256(email)>:<source>`); a locked source (password spraying)
 * is refused here too.
 */
export function createSecondFactorThrottle(deps: Deps) {
  const accountKey = (platformId: string, email: string, source: string) =>
    `mfa:account:${platformId}:${hash(normalizeEmail(email))}:${source}`;
  const sourceKey = (platformId: string, source: string) => `signin:source:${platformId}:${source}`;

  return {
    /**
     * Runs `check` unless locked; a failure counts and may start a lock, a success clears the key.
     * `counted` runs in the counting transaction with the failure and the lock it started (0: none).
     */
    async attempt<T extends { ok: boolean }>(
      platformId: string,
      email: string,
      source: string,
      check: () => Promise<T>,
      counted?: (trx: Queryable, failure: T, lockedSeconds: number) => Promise<void>,
    ): Promise<T | { ok: false; lockedSeconds: number }> {
      const key = accountKey(platformId, email, source);
      const now = deps.now();
      const locked = Math.max(
        0,
        ...(await throttles.findMany(deps.db, [key, sourceKey(platformId, source)])).map((r) => lockedSeconds(r, now)),
      );
      if (locked) return { ok: false, lockedSeconds: locked };
      const result = await check();
      if (result.ok) {
        await throttles.deleteKey(deps.db, key);
        return result;
      }
      const lockedNow = await deps.db.transaction(async (trx) => {
        const at = deps.now();
        const rows = await throttles.findManyForUpdate(trx, [key], at);
        const next = afterAttempt(rows.get(key)!, at, SIGN_IN_ACCOUNT_SOURCE);
        await throttles.update(trx, next);
        if (counted) await counted(trx, result, lockedSeconds(next, at)); // unlocked before the check: a lock now is this failure's
        return lockedSeconds(next, at);
      });
      if (lockedNow) {
        deps.metrics.lockouts.inc({ throttle: 'second_factor' });
        return { ok: false, lockedSeconds: lockedNow };
      }
      return result;
    },
  };
}
