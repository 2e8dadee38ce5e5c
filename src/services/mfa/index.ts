import * as mfa from '../../repositories/mfa.repository';
import { isMfaPolicy, type AuthMethod, type MfaPolicy } from '../../domain/mfa';
import type { Deps } from '../deps';
import { createTotp } from './totp.service';
import { createRecoveryCodes } from './recovery-codes.service';
import { createSecondFactorThrottle } from './second-factor-throttle';
import { createSecondFactorRequirement } from './requirement';

export type SecondFactorInput = { method: 'totp' | 'recovery_code'; code: string };
export type SecondFactorOutcome =
  | { ok: true; amr: AuthMethod }
  | { ok: false; lockedSeconds: number; reason?: 'invalid' | 'replayed' | 'not_enrolled' };

/**
 * Second factors (issue 13, DESIGN §15): TOTP, recovery codes and the platform's policy. The
 * interaction and the account page call these; passkeys (services/passkeys) add their own methods.
 */
export function createMfa(deps: Deps) {
  const totp = createTotp(deps);
  const recoveryCodes = createRecoveryCodes(deps);
  const throttle = createSecondFactorThrottle(deps);

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

    /** Confirms a pending TOTP enrolment with its first code; answers the first recovery codes, to show once. */
    async confirmTotp(userId: string, code: string): Promise<{ ok: true; recoveryCodes: string[] } | { ok: false }> {
      if (!(await totp.confirmEnrolment(userId, code))) return { ok: false };
      return { ok: true, recoveryCodes: await recoveryCodes.regenerate(userId) };
    },

    /** Removes the authenticator app and the recovery codes that stood in for it. */
    async removeTotp(userId: string): Promise<void> {
      await totp.remove(userId);
      await recoveryCodes.remove(userId);
    },

    /**
     * Checks a second factor at sign-in, throttled per account and source like passwords. A TOTP
     * code's step is used up; a recovery code is used up.
     */
    async verifySecondFactor(platformId: string, user: { id: string; email: string }, input: SecondFactorInput, source: string): Promise<SecondFactorOutcome> {
      return throttle.attempt(platformId, user.email, source, async (): Promise<SecondFactorOutcome> => {
        if (input.method === 'recovery_code') {
          return (await recoveryCodes.use(user.id, input.code)) ? { ok: true, amr: 'otp' } : { ok: false, lockedSeconds: 0, reason: 'invalid' };
        }
        const check = await totp.verify(user.id, input.code);
        return check.ok ? { ok: true, amr: 'otp' } : { ok: false, lockedSeconds: 0, reason: check.reason };
      });
    },
  };
}

export type Mfa = ReturnType<typeof createMfa>;
