import type { Response } from 'express';
import type { Services } from '../../services';
import { presentPasskeys, type PasskeyRow } from '../../presenters/passkey.presenter';
import type { Translate } from '../../i18n/catalogs';
import { allowPasskeyScripts } from '../middleware/security-headers';
import { signinPage, type PasskeyButton } from './signin.page';
import { renderPage } from './render';
import { accountUpstreamUrl, accountUrl, forgotPasswordUrl, requestedSection, withSection } from '../urls';
import { upstreamButtons } from './upstream.page';

export interface PasskeySection {
  /** False for an IP BASE_URL: the page says why instead of offering "Add a passkey". */
  isAvailable: boolean;
  /** BASE_URL's origin: where a browser that refused the ceremony ("not on this address") should go. */
  origin: string;
  rows: PasskeyRow[];
  actions: { options: string; add: string; remove: string };
}

/** The account page's "Passkeys" section; lets the page load the passkey scripts when they can work. */
export async function passkeySection(
  s: Services,
  res: Response,
  platformId: string,
  userId: string,
  t: Translate,
  locale: string,
): Promise<PasskeySection> {
  const q = `?platform_guid=${encodeURIComponent(platformId)}`;
  const isAvailable = s.passkeys.relyingParty.isAvailable;
  if (isAvailable) allowPasskeyScripts(res);
  return {
    isAvailable,
    origin: s.passkeys.relyingParty.origin,
    rows: presentPasskeys(await s.passkeys.list(platformId, userId), t, locale),
    actions: {
      options: `/account/passkeys/options${q}`,
      add: `/account/passkeys${q}`,
      remove: `/account/passkeys/remove${q}`,
    },
  };
}

/** The one-line warning shown instead of passkey buttons when BASE_URL is an IP address. */
export const PASSKEYS_NEED_HOST_NAME =
  'Passkeys are not available here: this server is reached by an IP address, and browsers allow passkeys only on a host name.';

export function passkeyButton(
  s: Services,
  urls: { action: string; options: string },
  autofill: boolean,
  label?: string,
): PasskeyButton {
  const isAvailable = s.passkeys.relyingParty.isAvailable;
  return {
    isAvailable,
    ...urls,
    autofill: autofill && isAvailable,
    unavailable: PASSKEYS_NEED_HOST_NAME,
    origin: s.passkeys.relyingParty.origin,
    label,
  };
}

/** A page whose model offers a passkey button loads the passkey scripts (CSP script-src 'self' on it only). */
export function allowScriptsFor(res: Response, model: Record<string, unknown>): void {
  const button = model.passkey as PasskeyButton | null | undefined;
  if (button?.isAvailable) allowPasskeyScripts(res);
}

/**
 * The account page's own sign-in page (account.router.ts), with "Sign in with a passkey" but no
 * autofill: an anonymous browser gets a session row only when the user asks for a passkey.
 */
export async function renderAccountSignIn(
  s: Services,
  res: Response,
  values: { email: string; error: string | null; errorValues?: Record<string, string | number> },
  status = 200,
): Promise<void> {
  const p = res.locals.platform;
  // The account page's tab asked for before the sign-in (`section`) goes along with every way in.
  const section = requestedSection(res.req.query);
  const at = (url: string) => withSection(url, section);
  const model = signinPage(res, {
    action: at(accountUrl(p.id, '/signin')),
    email: values.email,
    emailLocked: false,
    signupUrl: at(accountUrl(p.id, '/signup')),
    chooserUrl: null,
    forgotUrl: forgotPasswordUrl(p.id),
    error: values.error,
    errorValues: values.errorValues,
    passkey: passkeyButton(
      s,
      { action: at(accountUrl(p.id, '/passkey-signin')), options: accountUrl(p.id, '/passkey-signin-options') },
      false,
    ),
    // "Continue with …" (linked identities only: ../interaction/upstream.router.ts).
    upstreams: await upstreamButtons(s, res, p.id, (slug) => at(accountUpstreamUrl(p.id, slug))),
  });
  allowScriptsFor(res, model);
  renderPage(res, 'signin', model, status);
}
