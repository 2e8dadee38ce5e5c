import type { UpstreamInProgress } from './interaction';
import type { Locale } from './locales';
import type { DeviceInteraction } from './device-authorization';

/** An RFC 8707 resource an authorization request named, and the scopes of it the request is granted. */
export interface ResourceGrant {
  uri: string;
  scopes: string[];
}

/** A validated authorization request, kept in the browser session while the user interacts. */
export interface AuthorizationRequest {
  id: string;
  platformId: string;
  clientId: string;
  clientName: string;
  redirectUri: string;
  state?: string;
  nonce?: string;
  /** Narrowed scopes (spec scope rule 1), the named resources' granted scopes after the spec's. */
  scopes: string[];
  /** The RFC 8707 resources named (standard platforms), in the order named; absent or empty: none. */
  resources?: ResourceGrant[];
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
  /** The first factor is verified (userId, amr) and a second factor is due before the browser counts as signed in. */
  secondFactorPending?: boolean;
  /** The second-factor page's form: the authenticator's code (default) or a recovery code. */
  secondFactorMethod?: 'totp' | 'recovery_code';
  /** acr_values (OIDC Core 3.1.2.1), space-separated: `urn:latchkey:acr:mfa` asks for a second factor (step-up). */
  acrValues?: string;
  /** OIDC Core 3.1.2.1 ui_locales, space-separated BCP 47 tags: the pages' language before Accept-Language. */
  uiLocales?: string;
  /** The language this request's pages are shown in (ui_locales, else Accept-Language), set on each request: the mails it causes use it too. */
  locale?: Locale;
  /** RFC 8176 methods the sign-in of this interaction used so far (`pwd`, `hwk`/`swk` + `user`, …), for amr/acr. */
  amr?: string[];
  /** An upstream sign-in waiting on the link or sign-up page. */
  upstream?: UpstreamInProgress;
  /** The original query, so a lost session can start the request over (back button, expiry). */
  restart?: string;
  /**
   * RFC 8628: this interaction approves a device (BASE_URL/device), and ends in the device's
   * approval or denial instead of a redirect to the client; `redirectUri` is then that page.
   */
  device?: DeviceInteraction;
  createdAt: number;
}

/** A remembered consent's entry for a resource's scope: the indicator has no fragment, so `#` splits it unambiguously. */
export const resourceConsentEntry = (uri: string, scope: string) => `${uri}#${scope}`;

/**
 * What consent to this request covers, as the consents table keeps it: the spec's scopes by name,
 * a named resource by its indicator (access to it, even with none of its scopes) and its scopes as
 * resourceConsentEntry (the same scope name of two resources is two grants).
 */
export function consentEntriesOf(ar: Pick<AuthorizationRequest, 'scopes' | 'resources'>): string[] {
  const ofResources = (ar.resources ?? []).flatMap((r) => [
    r.uri,
    ...r.scopes.map((s) => resourceConsentEntry(r.uri, s)),
  ]);
  const resourceScopes = new Set((ar.resources ?? []).flatMap((r) => r.scopes));
  return [...ar.scopes.filter((s) => !resourceScopes.has(s)), ...ofResources];
}
