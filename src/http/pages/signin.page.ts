import type { Response } from 'express';
import type { Translate } from '../../i18n/catalogs';
import { allowPageScript } from '../middleware/security-headers';
import { translateMessage } from './messages';
import type { UpstreamButton } from './upstream.page';

/** "Sign in with a passkey" on a sign-in page (views/partials/passkey-signin.ejs; built by passkeys.ts). */
export interface PasskeyButton {
  isAvailable: boolean;
  /** The form the script submits with the browser's answer. */
  action: string;
  /** Where the script POSTs for the ceremony's options (JSON). */
  options: string;
  /** Conditional UI: the browser offers passkeys in the Email field's autofill. */
  autofill: boolean;
  /** The note shown instead on an IP BASE_URL. */
  unavailable: string;
  /** BASE_URL's origin: where a browser that refused the ceremony ("not on this address") should go. */
  origin: string;
  /** The button's name: "Sign in with a passkey" unless given ("Use a passkey" as a second factor). */
  label?: string;
}

/** The sign-in form, for an authorization (interaction.pages.ts) and for the account page (account.router.ts). */
export interface SigninModel {
  action: string;
  email: string;
  emailLocked: boolean;
  signupUrl: string | null;
  /** "Forgot password?"; the email known so far is added to it (signinPage). */
  forgotUrl: string | null;
  chooserUrl: string | null;
  /** A catalog key (or text), and the values of its placeholders. */
  error: string | null;
  errorValues?: Record<string, string | number>;
  /** The app the sign-in is for (AuthorizationRequest.clientName); null on the account page's own sign-in. */
  app?: string | null;
  /** "Use another email" on a pinned sign-in: ends the request back at the app. */
  anotherEmailAction?: string | null;
  restart?: string;
  /** "Sign in with a passkey" (src/http/pages/passkeys.ts); absent: no passkey button. */
  passkey?: PasskeyButton | null;
  /** "Continue with …" for the platform's upstream providers (./upstream.page.ts); absent: none. */
  upstreams?: UpstreamButton[];
}

/** Adds `email` to a link as a query parameter (the forgot-password page pre-fills it). */
export function withEmail(url: string, email: string | undefined): string {
  const e = (email ?? '').trim();
  if (!e) return url;
  return `${url}${url.includes('?') ? '&' : '?'}email=${encodeURIComponent(e.slice(0, 320))}`;
}

/** The refusals that are about what was typed: the password field is marked invalid (not for a throttle or a pinned email). */
const FIELD_ERRORS = new Set(['signin:errors.incorrectPassword', 'signin:errors.missingCredentials']);

/**
 * The sign-in page's model in the response's language: the title, the error translated, the
 * forgot-password link carrying the email, and the show-password script (public/password-toggle.js,
 * which also keeps that link's email up to date as the user types).
 */
export function signinPage(res: Response, m: SigninModel) {
  const t: Translate = res.locals.t;
  allowPageScript(res, 'password-toggle');
  return {
    ...m,
    title: t('signin:title'),
    app: m.app ?? null,
    anotherEmailAction: m.anotherEmailAction ?? null,
    error: translateMessage(t, m.error, m.errorValues ?? {}),
    passwordInvalid: m.error !== null && FIELD_ERRORS.has(m.error),
    forgotUrl: m.forgotUrl ? withEmail(m.forgotUrl, m.email) : null,
  };
}
