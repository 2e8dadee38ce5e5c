import { Router } from 'express';
import type { Services } from '../../services';
import type { HttpDeps } from '../http-deps';
import { formatUserCode, normalizeUserCode } from '../../domain/device-authorization';
import type { UserCodeCheck } from '../../services/device/device-authorization.service';
import { issueCsrf, requireCsrf } from '../middleware/csrf';
import { hostedFormBody } from '../request/hosted-forms';
import { attemptSource } from '../request/attempt-source';
import { field } from '../session/account-session';
import { browserAccounts } from '../session/browser-session';
import { createStepAnswer } from '../oauth/authorize-response';
import { DEVICE_PAGE_PATH, renderDeviceForm } from '../pages/device.page';

/** As the field shows a code from the link (verification_uri_complete): XXXX-XXXX when it is one, else as typed. */
const shown = (typed: string) => {
  const code = normalizeUserCode(typed);
  return code ? formatUserCode(code) : typed.trim().slice(0, 16);
};

/** A refused code's message (device:errors.…), its status, and how long a lock lasts. */
function refusal(check: Exclude<UserCodeCheck, { ok: true }>) {
  if (check.lockedSeconds > 0)
    return {
      error: 'device:errors.locked',
      errorValues: { count: Math.max(1, Math.ceil(check.lockedSeconds / 60)) },
      status: 429,
      retryAfter: check.lockedSeconds,
    };
  return { error: `device:errors.${check.reason}`, status: 400 };
}

/**
 * BASE_URL/device (RFC 8628 §3.3): the person types the code their device shows; a good code
 * starts an interaction — the chooser, every factor, then consent naming the device's client —
 * whose end is the device's approval or denial (src/http/oauth/authorize-response.ts).
 */
export function deviceRouter(s: Services, deps: HttpDeps): Router {
  const r = Router();
  const answerStep = createStepAnswer(s, deps);

  r.get(DEVICE_PAGE_PATH, issueCsrf, (req, res) => {
    const typed = typeof req.query.user_code === 'string' ? req.query.user_code : '';
    renderDeviceForm(res, { value: shown(typed) });
  });

  r.post(DEVICE_PAGE_PATH, hostedFormBody, issueCsrf, requireCsrf, async (req, res) => {
    const typed = field(req.body, 'user_code', 64);
    const check = await s.device.checkUserCode(typed, attemptSource(req));
    if (!check.ok) {
      const { error, errorValues, status, retryAfter } = refusal(check);
      if (retryAfter) res.set('Retry-After', String(retryAfter));
      return renderDeviceForm(res, { value: shown(typed), error, errorValues }, status);
    }
    const ar = s.device.interactionFor(check);
    res.locals.platform = await s.platforms.requirePlatform(ar.platformId); // the pages from here on are the platform's
    await answerStep(req, res, ar, await s.interaction.current(ar, browserAccounts(req, ar.platformId)));
  });
  return r;
}
