import * as mfa from '../../repositories/mfa.repository';
import { isMfaPolicy, type AuthMethod, type MfaPolicy } from '../../domain/mfa';
import type { Queryable } from '../../db';
import type { Deps } from '../deps';
import { createTotp } from './totp.service';
import { createRecoveryCodes, type NewRecoveryCodes } from './recovery-codes.service';
import { createSecondFactorThrottle } from './second-factor-throttle';
import { createSecondFactorRequirement } from './requirement';
import { createSecurityEvents, type SecurityOrigin } from '../security-events';
import type { SignInAudit } from '../attempt-throttle.service';

export type SecondFactorInput = { method: 'totp' | 'recovery_code'; code: string };
export type SecondFactorOutcome =
  | { ok: true; amr: AuthMethod }
  | { ok: false; lockedSeconds: number; reason?: 'invalid' | 'replayed' | 'not_enrolled' };

/**
 * Second factors: TOTP, recovery codes and the platform's policy. The
 * interaction and the account page call these; passkeys (services/passkeys) add their own methods.
 */
export function createMfa(deps: Deps) {
  const totp = createTotp(deps);
  const recoveryCodes = createRecoveryCodes(deps);
  const throttle = createSecondFactorThrottle(deps);
  const events = createSecurityEvents(deps);

  return {
    totp,
    recoveryCodes,

    /** Whether a sign-in with `amr` so far must still verify a second factor, or enrol one (./requirement.ts). */
    secondFactorNeed: createSecondFactorRequirement(deps),

    /** The platform's policy; `optional` for a platform the column does not know yet. */
    async policyOf(platformId: string): Promise<MfaPolicy> {
      const policy = await mfa.findMfaPolicy(deps.db, platformId);
      return isMfaPolicy(policy) ? policy : 'optional';
    },

    /** Sets the policy; false for an unknown platform. */
    setPolicy: (platformId: string, policy: MfaPolicy) => mfa.updateMfaPolicy(deps.db, platformId, policy),

    /** Second factors the user can be asked for (TOTP; recovery codes only stand in for one). */
    async factorsOf(userId: string): Promise<{ totp: boolean; recoveryCodesLeft: number }> {
      const [status, left] = await Promise.all([totp.status(userId), recoveryCodes.remaining(userId)]);
      return { totp: status.enrolled, recoveryCodesLeft: left };
    },

    /**
     * Confirms a pending TOTP enrolment with its first code; answers the first recovery codes, to
     * show once. With `origin`, mfa.enrolled commits with the recovery codes (the enrolment's end).
     */
    async confirmTotp(
      userId: string,
      code: string,
      origin?: SecurityOrigin,
    ): Promise<{ ok: true; recoveryCodes: string[]; replacedEarlier: boolean } | { ok: false }> {
      if (!(await totp.confirmEnrolment(userId, code))) return { ok: false };
      const audited =
        origin && ((trx: Queryable) => events.record(trx, origin, 'mfa.enrolled', userId, { factor: 'totp' }));
      const fresh = await recoveryCodes.regenerate(userId, audited);
      return { ok: true, recoveryCodes: fresh.codes, replacedEarlier: fresh.replacedEarlier };
    },

    /** New recovery codes replacing the old ones (account page); with `origin`, mfa.enrolled (factor recovery_codes) in the same transaction. */
    regenerateRecoveryCodes(userId: string, origin?: SecurityOrigin): Promise<NewRecoveryCodes> {
      return recoveryCodes.regenerate(
        userId,
        origin && ((trx) => events.record(trx, origin, 'mfa.enrolled', userId, { factor: 'recovery_codes' })),
      );
    },

    /**
     * Removes the authenticator app and the recovery codes that stood in for it, in one transaction.
     * With `origin` (the user on the account page), mfa.removed in it too; an admin reset records its own event.
     */
    async removeTotp(userId: string, origin?: SecurityOrigin): Promise<void> {
      await deps.db.transaction(async (trx) => {
        await mfa.deleteTotp(trx, userId);
        await mfa.deleteRecoveryCodes(trx, userId);
        if (origin) await events.record(trx, origin, 'mfa.removed', userId, { factor: 'totp' });
      });
    },

    /**
     * Checks a second factor at sign-in, throttled per account and source like passwords. A TOTP
     * code's step is used up; a recovery code is used up. With `audit`: mfa.used right after the
     * code is used up (its own statement), or sign_in.failed (+ sign_in.locked_out) with the count.
     */
    async verifySecondFactor(
      platformId: string,
      user: { id: string; email: string },
      input: SecondFactorInput,
      source: string,
      audit?: SignInAudit,
    ): Promise<SecondFactorOutcome> {
      const method = input.method;
      const purpose = audit?.purpose ? { purpose: audit.purpose } : {};
      let counted = false;
      const outcome = await throttle.attempt(
        platformId,
        user.email,
        source,
        async (): Promise<SecondFactorOutcome> => {
          if (method === 'recovery_code') {
            return (await recoveryCodes.use(user.id, input.code))
              ? { ok: true, amr: 'otp' }
              : { ok: false, lockedSeconds: 0, reason: 'invalid' };
          }
          const check = await totp.verify(user.id, input.code);
          return check.ok ? { ok: true, amr: 'otp' } : { ok: false, lockedSeconds: 0, reason: check.reason };
        },
        audit &&
          (async (trx, failure, lockedSeconds) => {
            counted = true;
            await events.record(trx, audit, 'sign_in.failed', user.id, {
              method,
              second_factor: true,
              reason: failure.ok ? 'invalid' : (failure.reason ?? 'invalid'),
              ...purpose,
            });
            if (lockedSeconds)
              await events.record(trx, audit, 'sign_in.locked_out', user.id, {
                method,
                second_factor: true,
                throttle: 'account_source',
                locked_seconds: lockedSeconds,
              });
          }),
      );
      if (audit && outcome.ok) await events.record(deps.db, audit, 'mfa.used', user.id, { factor: method, ...purpose });
      else if (audit && !counted)
        await events.record(deps.db, audit, 'sign_in.failed', user.id, {
          method,
          second_factor: true,
          reason: 'locked',
          ...purpose,
        });
      return outcome;
    },
  };
}

export type Mfa = ReturnType<typeof createMfa>;
