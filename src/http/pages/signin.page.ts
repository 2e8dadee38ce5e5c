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
}

export const signinPage = (m: SigninModel) => ({ title: 'Sign in', ...m });
