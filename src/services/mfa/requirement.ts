import * as mfa from '../../repositories/mfa.repository';
import * as passkeys from '../../repositories/webauthn-credential.repository';
import { acrOf, acrSatisfies, amrOf, isMfaPolicy, type AuthMethod } from '../../domain/mfa';
import type { Deps } from '../deps';
import { relyingPartyOf } from './passkeys.service';

/** What a sign-in still needs before it may finish: nothing, the user's second factor, or enrolling one. */
export type SecondFactorNeed = 'none' | 'second_factor' | 'enrol';

/**
 * When the second factor is asked (DESIGN §15): never on a platform whose policy is `off`;
 * otherwise when the sign-in so far (`amr`) is not multi-factor and the user has enrolled an
 * authenticator app, the policy is `required`, or the request asks for `urn:latchkey:acr:mfa`
 * (step-up). A passkey serves as the second factor then, but adding one does not by itself turn
 * two-step sign-in on: a passkey comes with no recovery codes, so losing the device would lock the
 * user out of every password sign-in (docs/decisions.md). A user without a factor enrols one (an
 * authenticator app) before going on.
 */
export function createSecondFactorRequirement(deps: Deps) {
  const passkeysUsable = relyingPartyOf(deps.config.baseUrl).isAvailable;
  return async function secondFactorNeed(platformId: string, userId: string, amr: readonly string[], acrValues?: string): Promise<SecondFactorNeed> {
    if (amrOf(amr as AuthMethod[]).includes('mfa')) return 'none';
    const stored = await mfa.findMfaPolicy(deps.db, platformId);
    const policy = isMfaPolicy(stored) ? stored : 'optional';
    if (policy === 'off') return 'none';
    const [totp, passkeyCount] = await Promise.all([mfa.findTotp(deps.db, userId), passkeys.countByUser(deps.db, platformId, userId)]);
    // A passkey is no usable factor while BASE_URL is an IP address (no relying party, DESIGN §15).
    const hasTotp = Boolean(totp?.confirmedAt);
    const hasFactor = hasTotp || (passkeyCount > 0 && passkeysUsable);
    const stepUp = !acrSatisfies(acrOf(amr as AuthMethod[]), acrValues);
    if (!hasTotp && policy !== 'required' && !stepUp) return 'none';
    return hasFactor ? 'second_factor' : 'enrol';
  };
}

export type SecondFactorRequirement = ReturnType<typeof createSecondFactorRequirement>;
