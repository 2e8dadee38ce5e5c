/**
 * Upstream identity providers: people sign in to a platform through an OpenID Connect
 * provider they already have, or GitHub. The provider is configured per platform; its subject is
 * linked to a local user in `user_identities`.
 */

export const UPSTREAM_KINDS = ['oidc', 'google', 'microsoft', 'github'] as const;
export type UpstreamKind = (typeof UPSTREAM_KINDS)[number];

/** Local claim → the upstream's claim name, for upstreams that name them otherwise. */
export const MAPPABLE_CLAIMS = ['email', 'email_verified', 'given_name', 'family_name', 'name', 'picture'] as const;
export type ClaimMapping = Partial<Record<(typeof MAPPABLE_CLAIMS)[number], string>>;

export interface UpstreamProvider {
  id: string;
  platformId: string;
  /** In URLs and button names; unique per platform: [a-z0-9-], 1–40. */
  slug: string;
  kind: UpstreamKind;
  /** "Continue with {displayName}". */
  displayName: string;
  /** oidc/google/microsoft: the issuer its discovery is read from; github: the web base URL. */
  issuer: string;
  /** github: the REST API base URL; null for the others. */
  apiBaseUrl: string | null;
  clientId: string;
  hasClientSecret: boolean;
  scopes: string[];
  claimMapping: ClaimMapping;
  /** email_verified is carried over only when this is true and the upstream verified the email. */
  trustEmail: boolean;
  /** The upstream's amr can satisfy the platform's MFA policy only when this is true. */
  trustMfa: boolean;
  /** The upstream's tokens are kept (sealed) on the identity only when this is true. */
  storeTokens: boolean;
  enabled: boolean;
  createdAt: Date;
  updatedAt: Date;
}

/** What a preset fills in when the operator leaves it out. */
export interface UpstreamPreset {
  displayName: string;
  issuer: string;
  apiBaseUrl: string | null;
  scopes: string[];
  trustEmail: boolean;
}

/**
 * The presets' documented endpoints. Google and Microsoft are OpenID Connect providers read by
 * discovery; GitHub is OAuth 2.0 with its REST API for the profile. `issuer` (and GitHub's
 * `apiBaseUrl`) may be overridden: Microsoft's tenant, GitHub Enterprise Server, or a local stand-in.
 */
export const UPSTREAM_PRESETS: Record<Exclude<UpstreamKind, 'oidc'>, UpstreamPreset> = {
  google: {
    displayName: 'Google',
    issuer: 'https://accounts.google.com',
    apiBaseUrl: null,
    scopes: ['openid', 'email', 'profile'],
    trustEmail: true,
  },
  // The "common" tenant's issuer is a template ({tenantid}): pick a tenant for a verifiable issuer.
  microsoft: {
    displayName: 'Microsoft',
    issuer: 'https://login.microsoftonline.com/common/v2.0',
    apiBaseUrl: null,
    scopes: ['openid', 'email', 'profile'],
    trustEmail: false,
  },
  github: {
    displayName: 'GitHub',
    issuer: 'https://github.com',
    apiBaseUrl: 'https://api.github.com',
    scopes: ['read:user', 'user:email'],
    trustEmail: true,
  },
};

/** The issuer of a Microsoft Entra tenant (a tenant id or domain, or common/organizations/consumers). */
export const microsoftIssuer = (tenant: string): string =>
  `https://login.microsoftonline.com/${encodeURIComponent(tenant)}/v2.0`;

/** What an upstream sign-in proved, after its ID token (or GitHub's API answer) was verified. */
export interface UpstreamProfile {
  providerId: string;
  /** The upstream's stable subject: OIDC `sub`, GitHub's numeric user id. */
  subject: string;
  email: string | null;
  /** The upstream said the email is verified (trusting it is the provider's `trustEmail`). */
  emailVerified: boolean;
  givenName: string | null;
  familyName: string | null;
  name: string | null;
  picture: string | null;
  /** The upstream ID token's amr, when it sent one. */
  amr: string[] | null;
  /** The upstream's tokens, when the provider keeps them (`storeTokens`). */
  tokens?: { accessToken: string; refreshToken?: string; idToken?: string; expiresAt?: number };
}

/** A local user's link to an upstream identity. */
export interface UserIdentity {
  id: string;
  platformId: string;
  userId: string;
  providerId: string;
  subject: string;
  email: string | null;
  createdAt: Date;
  lastUsedAt: Date;
}

/** Why an upstream sign-in did not complete (the failure page names the provider; the log says which). */
export const UPSTREAM_FAILURES = [
  'upstream_error', // the upstream answered with error=… (access_denied, …)
  'unreachable', // discovery, token, JWKS or API call failed or timed out
  'state_mismatch', // no pending sign-in for this state in this browser
  'invalid_response', // the token response or ID token did not verify (nonce, iss, aud, signature, PKCE)
  'no_subject', // no usable subject in the answer
] as const;
export type UpstreamFailure = (typeof UPSTREAM_FAILURES)[number];

export const UPSTREAM_SLUG = /^[a-z0-9](?:[a-z0-9-]{0,38}[a-z0-9])?$/;

/**
 * The redirect URI to register at every upstream of a platform (one callback per platform, a fixed
 * path): what the admin surfaces show; the HTTP layer's helper builds the same.
 */
export const upstreamCallbackUrl = (baseUrl: string, platformId: string): string =>
  `${baseUrl}/platforms/${platformId}/upstream/callback`;
