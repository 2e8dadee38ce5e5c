import { Router, type Request, type Response } from 'express';
import type { Services } from '../../../services';
import type { HttpDeps } from '../../http-deps';
import { issuerOf } from '../../../domain/platform';
import { invalidRequest } from '../../../errors';
import { parseInput } from '../../../services/admin/parse-input';
import { RegistrationTokenCreate } from '../../../wire/admin/registration-tokens.schemas';
import { presentRegistrationToken } from '../../../presenters/admin/registration-token.presenter';
import { field, queryParam, submitForm } from './forms';
import { operatorActor } from './operator';
import { renderConsole } from './render';
import { saveConsoleSession } from './session';

const PAGE = 50;

/** The "Expires in" choices (seconds; '' never), within RegistrationTokenCreate's bounds. */
const EXPIRIES: Array<{ value: string; label: string }> = [
  { value: '', label: 'Never' },
  { value: '3600', label: '1 hour' },
  { value: '86400', label: '1 day' },
  { value: '604800', label: '7 days' },
  { value: '2592000', label: '30 days' },
  { value: '31536000', label: '1 year' },
];

/** An optional whole-number field: empty → left out (the API's default); else its number, checked by the schema. */
function wholeNumberOf(req: Request, name: string, emptyMeans: string): number | undefined {
  const text = field(req, name);
  if (!text) return undefined;
  if (!/^\d+$/.test(text)) throw invalidRequest(`${name}: a whole number, or empty for ${emptyMeans}`);
  return Number(text);
}

/** The form as typed, to show it again after a refusal. */
const formOf = (req: Request) => ({ max_uses: field(req, 'max_uses'), expires_in: field(req, 'expires_in') });
type Form = ReturnType<typeof formOf>;
const NEW_FORM: Form = { max_uses: '', expires_in: '86400' };

/**
 * A platform's initial access tokens for dynamic registration (s.admin.registrationTokens): the
 * list, the form to make one and a revoke per token. A new token leaves once: sealed in the console
 * session across the 303, shown on the next render of this page and dropped from the session by it.
 * Standard platforms only: on a seed platform the screen says why and offers no form (tokens kept
 * from a time it was standard can still be revoked).
 */
export function consoleRegistrationTokensRouter(s: Services, deps: HttpDeps): Router {
  const r = Router();
  const base = (req: Request) => `/admin/platforms/${req.params.platformId}/registration-tokens`;
  const platformId = (req: Request) => String(req.params.platformId);

  async function show(req: Request, res: Response, form: Form = NEW_FORM, error: string | null = null, status = 200) {
    const actor = operatorActor(req, res);
    const cursor = queryParam(req, 'cursor') || undefined;
    const page = await s.admin.registrationTokens.list(actor, platformId(req), { limit: PAGE, cursor });
    const platform = await s.admin.platforms.get(actor, platformId(req));
    const once = req.session.console?.registrationTokenOnce;
    let token: string | null = null;
    if (once) {
      // Shown on this render only, whichever platform it was for.
      delete req.session.console!.registrationTokenOnce;
      await saveConsoleSession(req);
      if (once.platformId === platform.id) token = s.admin.shownOnce.unseal(once.sealed);
    }
    renderConsole(
      req,
      res,
      'registration-tokens',
      {
        title: 'Registration tokens',
        tokens: page.items.map(presentRegistrationToken),
        nextUrl: page.nextCursor ? `${base(req)}?cursor=${encodeURIComponent(page.nextCursor)}` : null,
        firstUrl: cursor ? base(req) : null,
        isStandard: platform.signingProfile === 'standard',
        policy: platform.registration,
        registerUrl: `${issuerOf(deps.config.baseUrl, platform)}/oauth/register`,
        keysUrl: `/admin/platforms/${platform.id}/keys`,
        token,
        form,
        expiries: EXPIRIES,
        action: base(req),
        error,
      },
      status,
    );
  }

  r.get('/admin/platforms/:platformId/registration-tokens', (req, res) => show(req, res));

  r.post('/admin/platforms/:platformId/registration-tokens', (req, res) =>
    submitForm(
      req,
      res,
      async () => {
        const input = parseInput(RegistrationTokenCreate, {
          max_uses: wholeNumberOf(req, 'max_uses', 'unlimited'),
          expires_in: wholeNumberOf(req, 'expires_in', 'never'),
        });
        const { registrationToken, token } = await s.admin.registrationTokens.create(
          operatorActor(req, res),
          platformId(req),
          input,
        );
        req.session.console!.registrationTokenOnce = {
          platformId: registrationToken.platformId,
          sealed: s.admin.shownOnce.seal(token),
        };
        return { message: `Registration token ${registrationToken.id} made.`, to: base(req) };
      },
      (error, status) => show(req, res, formOf(req), error, status),
    ),
  );

  r.post('/admin/platforms/:platformId/registration-tokens/:tokenId/revoke', (req, res) =>
    submitForm(
      req,
      res,
      async () => {
        if (field(req, 'confirm') !== 'yes') throw invalidRequest('tick "I understand" to revoke the token');
        const revoked = await s.admin.registrationTokens.revoke(
          operatorActor(req, res),
          platformId(req),
          String(req.params.tokenId),
        );
        return {
          message: `Registration token ${revoked.id} revoked: it registers no client from now; the clients it registered stay.`,
          to: base(req),
        };
      },
      (error, status) => show(req, res, NEW_FORM, error, status),
    ),
  );

  return r;
}
