/** A validated authorization request, kept in the browser session while the user interacts. */
export interface AuthorizationRequest {
  id: string;
  platformId: string;
  clientId: string;
  clientName: string;
  redirectUri: string;
  state?: string;
  nonce?: string;
  /** Narrowed scopes (spec scope rule 1). */
  scopes: string[];
  codeChallenge?: string;
  prompts: string[];
  maxAge?: number;
  loginHint?: string;
  idTokenHintSub?: string;
  action?: 'login' | 'register';
  prefill: { givenName?: string; familyName?: string; phoneNumber?: string };
  /** Progress of the interaction. */
  userId?: string;
  authenticatedAt?: number;
  screen?: 'signin' | 'signup';
  signinEmail?: string;
  consentGiven?: boolean;
  /** RFC 8176 methods the sign-in of this interaction used so far (`pwd`, `hwk`/`swk` + `user`, …), for amr/acr (DESIGN §15). */
  amr?: string[];
  /** The original query, so a lost session can start the request over (back button, expiry). */
  restart?: string;
  createdAt: number;
}
