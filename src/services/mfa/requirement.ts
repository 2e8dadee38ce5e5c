import * as mfa from '../../repositories/mfa.repository';
import { acrOf, acrSatisfies, amrOf, isMfaPolicy, type AuthMethod } from '../../domain/mfa';
import type { Deps } from '../deps';
import { relyingPartyOf } from './passkeys.service';

/** What a sign-in still needs before it may finish: nothing, the user's second factor, or enrolling one. */
export type SecondFactorNeed = 'none' | 'second_factor' | 'enrol';

/**
 * When the second factor is asked: never on a platform whose policy is `off`;
 * otherwise when the sign-in so far (`amr`) is not multi-factor and the user has enrolled an
 * authenticator app, the policy is `required`, or the request asks for `urn:latchkey:acr:mfa`
 * (step-up). A passkey serves as the second factor then, but adding one does not by itself turn
 * two-step sign-in on: a passkey comes with no recovery codes, so losing the device would lock the
 * user out of every password sign-in (docs/decisions.md). A user without a factor enrols one (an
 * authenticator app) before going on.
 */
/**
 * Answers already given during one request, keyed by the request's authorization object: a
 * sign-in asks once before the browser signs in and once when the next step is decided, and the
 * second answer is the first (one read per request; a new request reads afresh).
 */
const answered = new WeakMap<object, Map<string, Promise<SecondFactorNeed>>>();

export function createSecondFactorRequirement(deps: Deps) {
  const passkeysUsable = relyingPartyOf(deps.config.baseUrl).isAvailable;
  async function need(
    platformId: string,
    userId: string,
    amr: readonly string[],
    acrValues?: string,
  ): Promise<SecondFactorNeed> {
    const state = await mfa.findSecondFactorState(deps.db, platformId, userId);
    const policy = isMfaPolicy(state.policy) ? state.policy : 'optional';
    if (policy === 'off') return 'none';
    // A passkey is no usable factor while BASE_URL is an IP address (no relying party).
    const hasTotp = state.totpConfirmed;
    const hasFactor = hasTotp || (state.passkeys > 0 && passkeysUsable);
    const stepUp = !acrSatisfies(acrOf(amr as AuthMethod[]), acrValues);
    if (!hasTotp && policy !== 'required' && !stepUp) return 'none';
    return hasFactor ? 'second_factor' : 'enrol';
  }
  /** `request`: the authorization being decided in this request, to answer from its earlier answer. */
  return function secondFactorNeed(
    platformId: string,
    userId: string,
    amr: readonly string[],
    acrValues?: string,
    request?: object,
  ): Promise<SecondFactorNeed> {
    if (amrOf(amr as AuthMethod[]).includes('mfa')) return Promise.resolve('none');
    if (!request) return need(platformId, userId, amr, acrValues);
    let byKey = answered.get(request);
    if (!byKey) answered.set(request, (byKey = new Map()));
    const key = `${platformId} ${userId} ${amr.join(',')} ${acrValues ?? ''}`;
    let answer = byKey.get(key);
    if (!answer) byKey.set(key, (answer = need(platformId, userId, amr, acrValues)));
    return answer;
  };
}

export type SecondFactorRequirement = ReturnType<typeof createSecondFactorRequirement>;
