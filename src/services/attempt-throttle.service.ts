import { createHash } from 'node:crypto';
import * as throttles from '../repositories/attempt-throttle.repository';
import type { ThrottleRow } from '../repositories/attempt-throttle.repository';
import { normalizeEmail, type User } from '../domain/user';
import type { Queryable } from '../db';
import type { Deps } from './deps';
import type { CreateUserResult } from './users.service';
import { createSecurityEvents, type SecurityOrigin } from './security-events';

/**
 * A throttle: `threshold` counted attempts within `windowSeconds` lock the key for
 * `baseLockSeconds`, doubling with each consecutive lock up to `maxLockSeconds`; the lock count
 * is forgotten `lockMemorySeconds` after the last lock ended.
 */
export interface ThrottlePolicy {
  threshold: number;
  windowSeconds: number;
  baseLockSeconds: number;
  maxLockSeconds: number;
  lockMemorySeconds: number;
}

const MINUTE = 60;
/** Failed sign-ins for one account from one source: an attacker elsewhere never locks the user out. */
export const SIGN_IN_ACCOUNT_SOURCE: ThrottlePolicy = {
  threshold: 5,
  windowSeconds: 15 * MINUTE,
  baseLockSeconds: MINUTE,
  maxLockSeconds: 15 * MINUTE,
  lockMemorySeconds: 60 * MINUTE,
};
/** Failed sign-ins from one source over every account of the platform (password spraying). */
export const SIGN_IN_SOURCE: ThrottlePolicy = {
  threshold: 20,
  windowSeconds: 15 * MINUTE,
  baseLockSeconds: MINUTE,
  maxLockSeconds: 15 * MINUTE,
  lockMemorySeconds: 60 * MINUTE,
};
/** Sign-up attempts from one source (account spam, email probing). */
const SIGN_UP_SOURCE: ThrottlePolicy = {
  threshold: 10,
  windowSeconds: 60 * MINUTE,
  baseLockSeconds: 10 * MINUTE,
  maxLockSeconds: 60 * MINUTE,
  lockMemorySeconds: 6 * 60 * MINUTE,
};

const ms = (seconds: number) => seconds * 1000;

/** Whole seconds the row stays locked at `now`; 0 when it is not locked. */
export function lockedSeconds(row: Pick<ThrottleRow, 'lockedUntil'> | undefined, now: Date): number {
  const left = (row?.lockedUntil?.getTime() ?? 0) - now.getTime();
  return left > 0 ? Math.ceil(left / 1000) : 0;
}

/** The state after one more counted attempt (pure). Reaching the threshold locks and starts afresh. */
export function afterAttempt(prev: ThrottleRow, now: Date, p: ThrottlePolicy): ThrottleRow {
  const t = now.getTime();
  const inWindow = prev.failures > 0 && t - prev.windowStartedAt.getTime() < ms(p.windowSeconds);
  let failures = inWindow ? prev.failures + 1 : 1;
  let windowStartedAt = inWindow ? prev.windowStartedAt : now;
  const remembered = prev.lockedUntil !== null && t - prev.lockedUntil.getTime() < ms(p.lockMemorySeconds);
  let locks = remembered ? prev.locks : 0;
  let lockedUntil = remembered ? prev.lockedUntil : null;
  if (failures >= p.threshold) {
    locks += 1;
    lockedUntil = new Date(t + ms(Math.min(p.baseLockSeconds * 2 ** (locks - 1), p.maxLockSeconds)));
    failures = 0;
    windowStartedAt = now;
  }
  const windowEnd = windowStartedAt.getTime() + ms(p.windowSeconds);
  const lockEnd = lockedUntil ? lockedUntil.getTime() + ms(p.lockMemorySeconds) : 0;
  return {
    key: prev.key,
    failures,
    windowStartedAt,
    locks,
    lockedUntil,
    expiresAt: new Date(Math.max(windowEnd, lockEnd)),
  };
}

export type SignInOutcome = { ok: true; user: User } | { ok: false; lockedSeconds: number };
/** What checking a password found: the user, or the account the email named (null: none). */
export type CredentialCheck = { ok: true; user: User } | { ok: false; userId: string | null; disabled?: true };
/** A sign-in to audit: where it comes from; `purpose` marks a password re-entered to confirm a change. */
export type SignInAudit = SecurityOrigin & { purpose?: 'confirm' };
export type SignUpOutcome = CreateUserResult | { ok: false; errors: []; lockedSeconds: number };

const hash = (s: string) => createHash('sha256').update(s).digest('base64url');

/** Key kinds, each `KIND:platformId:…`; the source (an IPv6 prefix may hold colons) comes last. */
const KINDS = ['signin:account', 'signin:source', 'signup:source', 'mfa:account'] as const; // mfa: services/mfa/second-factor-throttle.ts

export interface ThrottleFilter {
  platformId?: string;
  email?: string;
  source?: string;
  lockedOnly?: boolean;
}

export interface ThrottleEntry {
  key: string;
  kind: 'sign_in_account' | 'sign_in_source' | 'sign_up_source' | 'second_factor_account';
  platformId: string;
  /** SHA-256 (base64url) of the normalised email, for sign-in keys of one account. */
  emailSha256: string | null;
  source: string;
  failures: number;
  locks: number;
  lockedUntil: Date | null;
  lockedSeconds: number;
}

function matches(e: ThrottleEntry, f: ThrottleFilter): boolean {
  if (f.email !== undefined && e.emailSha256 !== hash(normalizeEmail(f.email))) return false;
  if (f.source !== undefined && e.source !== f.source) return false;
  return true;
}

/** Reads a key back into its parts; undefined for a key of another shape. */
function describe(row: ThrottleRow, now: Date): ThrottleEntry | undefined {
  const kind = KINDS.find((k) => row.key.startsWith(`${k}:`));
  if (!kind) return undefined;
  const parts = row.key.slice(kind.length + 1).split(':');
  const platformId = parts.shift()!;
  const emailSha256 = kind === 'signin:account' || kind === 'mfa:account' ? (parts.shift() ?? null) : null;
  const common = {
    key: row.key,
    platformId,
    emailSha256,
    source: parts.join(':'),
    failures: row.failures,
    locks: row.locks,
    lockedUntil: row.lockedUntil,
    lockedSeconds: lockedSeconds(row, now),
  };
  const names = {
    'signin:account': 'sign_in_account',
    'signin:source': 'sign_in_source',
    'signup:source': 'sign_up_source',
    'mfa:account': 'second_factor_account',
  } as const;
  return { ...common, kind: names[kind] };
}

/**
 * Password-guessing defence: failed sign-ins are counted per account and source and
 * per source; while a key is locked no password is checked. `source` is the caller's address key.
 */
export function createAttemptThrottle(
  deps: Deps,
  checkCredentials: (platformId: string, email: string, password: string) => Promise<CredentialCheck>,
) {
  const events = createSecurityEvents(deps);
  const accountKey = (platformId: string, email: string, source: string) =>
    `signin:account:${platformId}:${hash(normalizeEmail(email))}:${source}`;
  const sourceKey = (platformId: string, source: string) => `signin:source:${platformId}:${source}`;
  const signUpKey = (platformId: string, source: string) => `signup:source:${platformId}:${source}`;

  /** Longest lock in force over the keys. */
  async function lockedFor(keys: string[]): Promise<number> {
    return (await throttleState(keys)).locked;
  }

  /** Longest lock in force over the keys, and which of them hold a row at all. */
  async function throttleState(keys: string[]): Promise<{ locked: number; held: Set<string> }> {
    const now = deps.now();
    const rows = await throttles.findMany(deps.db, keys);
    return { locked: Math.max(0, ...rows.map((r) => lockedSeconds(r, now))), held: new Set(rows.map((r) => r.key)) };
  }

  /**
   * Counts one attempt on each key (one transaction, rows locked) and returns the longest lock now
   * in force. `also` runs in the same transaction with the keys this attempt locked (the audit log).
   */
  async function count(
    policies: Array<[string, ThrottlePolicy]>,
    also?: (trx: Queryable, lockedKeys: string[], seconds: number) => Promise<void>,
  ): Promise<number> {
    return deps.db.transaction(async (trx) => {
      const now = deps.now();
      const rows = await throttles.findManyForUpdate(
        trx,
        policies.map(([key]) => key),
        now,
      );
      let locked = 0;
      const lockedKeys: string[] = [];
      for (const [key, policy] of policies) {
        const next = afterAttempt(rows.get(key)!, now, policy);
        await throttles.update(trx, next);
        if (lockedSeconds(next, now) > 0 && lockedSeconds(rows.get(key), now) === 0) lockedKeys.push(key);
        locked = Math.max(locked, lockedSeconds(next, now));
      }
      if (also) await also(trx, lockedKeys, locked);
      return locked;
    });
  }

  /** Throttle keys in force, for operators (`admin throttle list`); emails only as their SHA-256. */
  async function listThrottles(filter: ThrottleFilter = {}): Promise<ThrottleEntry[]> {
    const now = deps.now();
    const prefixes = filter.platformId ? KINDS.map((k) => `${k}:${filter.platformId}:`) : KINDS.map((k) => `${k}:`);
    const rows = await throttles.findLiveByPrefixes(deps.db, prefixes, now);
    return rows
      .map((row) => describe(row, now))
      .filter(
        (e): e is ThrottleEntry => e !== undefined && matches(e, filter) && (!filter.lockedOnly || e.lockedSeconds > 0),
      );
  }

  return {
    listThrottles,

    /**
     * Checks the password unless this account+source or this source is locked. A failure counts
     * on both keys and may start a lock; a success clears the account+source key. With `audit`,
     * the outcome is in the audit log: sign_in.succeeded, or sign_in.failed (and sign_in.locked_out
     * when this failure started a lock) in the counting transaction.
     */
    async attemptSignIn(
      platformId: string,
      email: string,
      password: string,
      source: string,
      audit?: SignInAudit,
    ): Promise<SignInOutcome> {
      const account = accountKey(platformId, email, source);
      const bySource = sourceKey(platformId, source);
      const { signIns, lockouts } = deps.metrics;
      const purpose = audit?.purpose ? { purpose: audit.purpose } : {};
      const { locked, held } = await throttleState([account, bySource]);
      if (locked) {
        signIns.inc({ result: 'locked' });
        // No password checked, no account looked up: the subject stays unknown.
        if (audit)
          await events.record(deps.db, audit, 'sign_in.failed', null, {
            method: 'pwd',
            reason: 'locked',
            email,
            ...purpose,
          });
        return { ok: false, lockedSeconds: locked };
      }
      const check = await checkCredentials(platformId, email, password);
      if (check.ok) {
        if (held.has(account)) await throttles.deleteKey(deps.db, account); // no failure counted: nothing to clear
        signIns.inc({ result: 'success' });
        if (audit)
          await events.recordSignInStep(audit, 'sign_in.succeeded', check.user.id, {
            method: 'pwd',
            amr: ['pwd'],
            ...purpose,
          });
        return { ok: true, user: check.user };
      }
      signIns.inc({ result: 'failure' });
      const lockedNow = await count(
        [
          [account, SIGN_IN_ACCOUNT_SOURCE],
          [bySource, SIGN_IN_SOURCE],
        ],
        audit &&
          (async (trx, lockedKeys, seconds) => {
            await events.record(trx, audit, 'sign_in.failed', check.userId, {
              method: 'pwd',
              reason: check.disabled ? 'disabled' : check.userId ? 'wrong_password' : 'unknown_email',
              email,
              ...purpose,
            });
            if (lockedKeys.length) {
              const throttle = lockedKeys.includes(account) ? 'account_source' : 'source';
              await events.record(trx, audit, 'sign_in.locked_out', check.userId, {
                method: 'pwd',
                throttle,
                locked_seconds: seconds,
                email,
              });
            }
          }),
      );
      if (lockedNow) lockouts.inc({ throttle: 'sign_in' }); // unlocked a moment ago: this failure started the lock
      return { ok: false, lockedSeconds: lockedNow };
    },

    /**
     * Runs `signUp` unless this source is locked. A sign-up that created an account or hit an
     * existing email counts (account spam, email probing); a form with mistakes to correct does
     * not. With `origin`, a new account's `sign_up` event commits with that count.
     */
    async attemptSignUp(
      platformId: string,
      source: string,
      signUp: () => Promise<CreateUserResult>,
      origin?: SecurityOrigin,
    ): Promise<SignUpOutcome> {
      const key = signUpKey(platformId, source);
      const locked = await lockedFor([key]);
      if (locked) return { ok: false, errors: [], lockedSeconds: locked };
      const result = await signUp();
      if (result.ok || result.emailTaken) {
        const audited =
          origin && result.ok
            ? (trx: Queryable) => events.record(trx, origin, 'sign_up', result.user.id, { method: 'pwd' })
            : undefined;
        if (await count([[key, SIGN_UP_SOURCE]], audited)) deps.metrics.lockouts.inc({ throttle: 'sign_up' }); // this attempt started the lock
      }
      return result;
    },

    /** Deletes the matching keys (a cleared lock also forgets its failures and lock history). Returns how many. */
    async clearThrottles(filter: ThrottleFilter & { platformId: string }): Promise<number> {
      const entries = await listThrottles(filter);
      await throttles.deleteKeys(
        deps.db,
        entries.map((e) => e.key),
      );
      return entries.length;
    },
  };
}

export type AttemptThrottle = ReturnType<typeof createAttemptThrottle>;
