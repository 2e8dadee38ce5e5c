/** The sign-in form, for an authorization (interaction.pages.ts) and for the account page (account.router.ts). */
export interface SigninModel {
  action: string;
  email: string;
  emailLocked: boolean;
  signupUrl: string | null;
  forgotUrl: string | null;
  chooserUrl: string | null;
  error: string | null;
  restart?: string;
  /** "Sign in with a passkey" (src/http/passkeys-page.ts); absent: no passkey button. */
  passkey?: import('../passkeys-page').PasskeyButton | null;
  /** "Continue with …" for the platform's upstream providers (./upstream.page.ts); absent: none. */
  upstreams?: import('./upstream.page').UpstreamButton[];
}

export const signinPage = (m: SigninModel) => ({ title: 'Sign in', ...m });
