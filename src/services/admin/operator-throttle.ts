import { createHash } from 'node:crypto';
import * as throttles from '../../repositories/attempt-throttle.repository';
import {
  afterAttempt,
  lockedSeconds,
  SIGN_IN_ACCOUNT_SOURCE,
  SIGN_IN_SOURCE,
  type ThrottlePolicy,
} from '../attempt-throttle.service';
import type { Deps } from '../deps';
import type { Queryable } from '../../db';
import type { Operator } from '../../domain/operator';

const hash = (s: string) => createHash('sha256').update(s).digest('base64url');

/**
 * Failed sign-in steps of one operator account from any source (password, code or passkey): 10
 * within 15 min lock the account for a minute, doubling up to 15 min. Above the email+source
 * threshold, so one source meets its own lock first; short, so someone who knows an operator's
 * email keeps it out for minutes at a time, not for good (docs/decisions.md, Console).
 */
const OPERATOR_ACCOUNT: ThrottlePolicy = {
  threshold: 10,
  windowSeconds: 15 * 60,
  baseLockSeconds: 60,
  maxLockSeconds: 15 * 60,
  lockMemorySeconds: 60 * 60,
};

/** Which lock a failure started: the account (any source), the email (or operator) with this source, or this source. */
export type OperatorLock = 'account' | 'account_source' | 'source';

/** After a counted failure: the longest lock now in force, and the locks this failure started. */
export interface OperatorFailure {
  lockedSeconds: number;
  started: OperatorLock[];
}

/**
 * Console sign-in guessing defence, on the sign-in throttle's table and policies: wrong passwords
 * per email and source (5 in 15 min lock a minute, doubling) and per source over every email
 * (spraying); wrong codes and passkey answers per operator and source; and every failed step per
 * account over all sources (OPERATOR_ACCOUNT), so rotating sources does not multiply the guesses.
 * Keys `operator:…`, apart from the platforms'.
 */
export function createOperatorThrottle(deps: Deps) {
  const keys = {
    password: (email: string, source: string) => `operator:account:${hash(email)}:${source}`,
    source: (source: string) => `operator:source:${source}`,
    code: (operatorId: string, source: string) => `operator:totp:${operatorId}:${source}`,
    // The email's hash, as for the password: an unknown email counts and locks like a known one.
    account: (email: string) => `operator:email:${hash(email)}`,
  };

  async function lockedFor(list: string[]): Promise<number> {
    const now = deps.now();
    return Math.max(0, ...(await throttles.findMany(deps.db, list)).map((r) => lockedSeconds(r, now)));
  }

  /** Counts a failure on each key: the longest lock now in force, and the locks it started. */
  async function fail(list: Array<[string, ThrottlePolicy, OperatorLock]>): Promise<OperatorFailure> {
    const failure = await deps.db.transaction(async (trx) => {
      const now = deps.now();
      const rows = await throttles.findManyForUpdate(
        trx,
        list.map(([k]) => k),
        now,
      );
      const result: OperatorFailure = { lockedSeconds: 0, started: [] };
      for (const [key, policy, lock] of list) {
        const next = afterAttempt(rows.get(key)!, now, policy);
        await throttles.update(trx, next);
        if (lockedSeconds(next, now) > 0 && lockedSeconds(rows.get(key), now) === 0) result.started.push(lock);
        result.lockedSeconds = Math.max(result.lockedSeconds, lockedSeconds(next, now));
      }
      return result;
    });
    if (failure.lockedSeconds) deps.metrics.lockouts.inc({ throttle: 'operator_sign_in' });
    return failure;
  }

  type Who = Pick<Operator, 'id' | 'email'>;
  return {
    passwordLocked: (email: string, source: string) =>
      lockedFor([keys.password(email, source), keys.source(source), keys.account(email)]),
    passwordFailed: (email: string, source: string) =>
      fail([
        [keys.password(email, source), SIGN_IN_ACCOUNT_SOURCE, 'account_source'],
        [keys.source(source), SIGN_IN_SOURCE, 'source'],
        [keys.account(email), OPERATOR_ACCOUNT, 'account'],
      ]),
    // Not the account key: the password alone must not wash away an account's failed codes.
    passwordOk: (email: string, source: string) => throttles.deleteKey(deps.db, keys.password(email, source)),
    codeLocked: (operator: Who, source: string) =>
      lockedFor([keys.code(operator.id, source), keys.source(source), keys.account(operator.email)]),
    codeFailed: (operator: Who, source: string) =>
      fail([
        [keys.code(operator.id, source), SIGN_IN_ACCOUNT_SOURCE, 'account_source'],
        [keys.account(operator.email), OPERATOR_ACCOUNT, 'account'],
      ]),
    /** Both factors passed: this source's and the account's failures are forgiven. */
    codeOk: (operator: Who, source: string) =>
      throttles.deleteKeys(deps.db, [keys.code(operator.id, source), keys.account(operator.email)]),
    /**
     * An operator's unlock: every count and lock of this account, over all sources (its password
     * per source, its codes per source, the account's own); a source's lock over every email stays. The keys gone.
     */
    async clearAccount(trx: Queryable, operator: Who): Promise<string[]> {
      const prefixes = [keys.password(operator.email, ''), keys.code(operator.id, ''), keys.account(operator.email)];
      const found = (await throttles.findLiveByPrefixes(trx, prefixes, deps.now())).map((r) => r.key);
      await throttles.deleteKeys(trx, found);
      return found;
    },
  };
}
