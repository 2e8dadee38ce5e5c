import type { Request, RequestHandler, Response } from 'express';
import type { Services } from '../../../services';
import type { Operator } from '../../../domain/operator';
import { OAuthError } from '../../../errors';
import { CHALLENGE_TTL_SECONDS } from '../../../services/mfa/webauthn';
import { allowPasskeyScripts } from '../../middleware/security-headers';
import { startCeremony, type CeremonyPurpose } from '../../session/passkey-session';
import { PASSKEYS_NEED_HOST_NAME } from '../../pages/passkeys';
import { sendJsonError } from '../../errors/error-handler';

/** A console passkey form (views/admin/partials/passkey-form.ejs), driven by public/passkeys.js. */
export interface ConsolePasskeyForm {
  /** False for an IP BASE_URL: a one-line note instead of the button. */
  isAvailable: boolean;
  action: string;
  options: string;
  unavailable: string;
}

/** The form's model; a page with a working one loads the passkey scripts (CSP script-src 'self' on it only). */
export function consolePasskeyForm(
  s: Services,
  res: Response,
  urls: { action: string; options: string },
): ConsolePasskeyForm {
  const isAvailable = s.operators.passkeys.relyingParty.isAvailable;
  if (isAvailable) allowPasskeyScripts(res);
  return { isAvailable, ...urls, unavailable: PASSKEYS_NEED_HOST_NAME };
}

/** A ceremony's challenge lives in the console session under the operator's id (one-use, 10 minutes). */
export const operatorScope = (operator: Pick<Operator, 'id'>) => `operator:${operator.id}`;

/**
 * A ceremony's options as JSON for public/passkeys.js: the operator (`find`: the pending sign-in's or
 * the signed-in one), the options, and the challenge kept in the console session. Errors as JSON.
 */
export function passkeyOptionsRoute(
  s: Services,
  purpose: CeremonyPurpose,
  find: (req: Request, res: Response) => Promise<Operator | undefined>,
  options: (operator: Operator) => Promise<{ challenge: string }>,
): RequestHandler {
  return async (req, res) => {
    if (!s.operators.passkeys.relyingParty.isAvailable)
      return sendJsonError(
        res,
        new OAuthError('invalid_request', 'Passkeys need a host name: this server is reached by an IP address.'),
      );
    const operator = await find(req, res);
    if (!operator) return sendJsonError(res, new OAuthError('invalid_request', 'Sign in again.', { status: 401 }));
    const json = await options(operator);
    startCeremony(req, purpose, operatorScope(operator), json.challenge, CHALLENGE_TTL_SECONDS);
    res.json({ options: json });
  };
}
