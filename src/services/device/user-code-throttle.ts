import { digest } from '../../crypto/digest';
import * as throttles from '../../repositories/attempt-throttle.repository';
import { afterAttempt, lockedSeconds, type ThrottlePolicy } from '../attempt-throttle.service';
import type { Deps } from '../deps';

const MINUTE = 60;

/**
 * Wrong user codes from one source (RFC 8628 §5.1: the user code is guessable, its entry point
 * must be rate-limited). A person who mistypes does it once or twice; a script stops after ten
 * per quarter hour, locked a minute, doubling up to a quarter hour.
 */
export const USER_CODE_SOURCE: ThrottlePolicy = {
  threshold: 10,
  windowSeconds: 15 * MINUTE,
  baseLockSeconds: MINUTE,
  maxLockSeconds: 15 * MINUTE,
  lockMemorySeconds: 60 * MINUTE,
};

/** Wrong tries of one typed code, from anywhere: many sources hammering the same code get nowhere either. */
export const USER_CODE_TRIED: ThrottlePolicy = {
  threshold: 5,
  windowSeconds: 15 * MINUTE,
  baseLockSeconds: MINUTE,
  maxLockSeconds: 15 * MINUTE,
  lockMemorySeconds: 60 * MINUTE,
};

/**
 * User-code guessing defence on the attempt throttle's rows: keys `device:source:<source>` and
 * `device:code:<sha256(code)>` (a code is never stored in clear). No platform in the key: the page
 * at BASE_URL/device belongs to none until a code is found.
 */
export function createUserCodeThrottle(deps: Deps) {
  const sourceKey = (source: string) => `device:source:${source}`;
  const codeKey = (code: string) => `device:code:${digest(code)}`;

  return {
    /** Seconds the source, or this typed code (when well-formed), stays locked (0: not locked). */
    async lockedFor(source: string, code: string | undefined): Promise<number> {
      const now = deps.now();
      const rows = await throttles.findMany(deps.db, code ? [sourceKey(source), codeKey(code)] : [sourceKey(source)]);
      return Math.max(0, ...rows.map((r) => lockedSeconds(r, now)));
    },

    /** Counts a wrong code on both keys (one transaction, rows locked); the longest lock now in force. */
    async countFailure(source: string, code: string): Promise<number> {
      const policies: Array<[string, ThrottlePolicy]> = [
        [sourceKey(source), USER_CODE_SOURCE],
        [codeKey(code), USER_CODE_TRIED],
      ];
      const locked = await deps.db.transaction(async (trx) => {
        const now = deps.now();
        const rows = await throttles.findManyForUpdate(
          trx,
          policies.map(([key]) => key),
          now,
        );
        let longest = 0;
        for (const [key, policy] of policies) {
          const next = afterAttempt(rows.get(key)!, now, policy);
          await throttles.update(trx, next);
          longest = Math.max(longest, lockedSeconds(next, now));
        }
        return longest;
      });
      if (locked) deps.metrics.lockouts.inc({ throttle: 'device_user_code' });
      return locked;
    },
  };
}
