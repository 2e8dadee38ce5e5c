import { createHash } from 'node:crypto';
import * as throttles from '../../repositories/attempt-throttle.repository';
import { afterAttempt, lockedSeconds, SIGN_IN_ACCOUNT_SOURCE, SIGN_IN_SOURCE } from '../attempt-throttle.service';
import type { Deps } from '../deps';

const hash = (s: string) => createHash('sha256').update(s).digest('base64url');

/**
 * Console sign-in guessing defence, on the sign-in throttle's table and policies: wrong passwords
 * per email and source (5 in 15 min lock a minute, doubling) and per source over every email
 * (spraying); wrong codes per operator and source. Keys `operator:…`, apart from the platforms'.
 */
export function createOperatorThrottle(deps: Deps) {
  const keys = {
    password: (email: string, source: string) => `operator:account:${hash(email)}:${source}`,
    source: (source: string) => `operator:source:${source}`,
    code: (operatorId: string, source: string) => `operator:totp:${operatorId}:${source}`,
  };

  async function lockedFor(list: string[]): Promise<number> {
    const now = deps.now();
    return Math.max(0, ...(await throttles.findMany(deps.db, list)).map((r) => lockedSeconds(r, now)));
  }

  /** Counts a failure on each key; the longest lock now in force. */
  async function fail(list: Array<[string, typeof SIGN_IN_SOURCE]>): Promise<number> {
    const locked = await deps.db.transaction(async (trx) => {
      const now = deps.now();
      const rows = await throttles.findManyForUpdate(trx, list.map(([k]) => k), now);
      let longest = 0;
      for (const [key, policy] of list) {
        const next = afterAttempt(rows.get(key)!, now, policy);
        await throttles.update(trx, next);
        longest = Math.max(longest, lockedSeconds(next, now));
      }
      return longest;
    });
    if (locked) deps.metrics.lockouts.inc({ throttle: 'operator_sign_in' });
    return locked;
  }

  return {
    passwordLocked: (email: string, source: string) => lockedFor([keys.password(email, source), keys.source(source)]),
    passwordFailed: (email: string, source: string) => fail([[keys.password(email, source), SIGN_IN_ACCOUNT_SOURCE], [keys.source(source), SIGN_IN_SOURCE]]),
    passwordOk: (email: string, source: string) => throttles.deleteKey(deps.db, keys.password(email, source)),
    codeLocked: (operatorId: string, source: string) => lockedFor([keys.code(operatorId, source), keys.source(source)]),
    codeFailed: (operatorId: string, source: string) => fail([[keys.code(operatorId, source), SIGN_IN_ACCOUNT_SOURCE]]),
    codeOk: (operatorId: string, source: string) => throttles.deleteKey(deps.db, keys.code(operatorId, source)),
  };
}
