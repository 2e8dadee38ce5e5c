import type { PlatformBranding } from './branding';

/** A tenant: its own users, clients and signing keys. */
export interface Platform {
  id: string;
  name: string;
  rateLimitOverrides: Record<string, number>;
  /** seed: the spec's HS512 interface, unchanged; standard: asymmetric keys and a public JWKS. */
  signingProfile: SigningProfile;
  /** Logo, accent colour, support email. */
  branding: PlatformBranding;
  createdAt: Date;
}

export const SIGNING_PROFILES = ['seed', 'standard'] as const;
export type SigningProfile = (typeof SIGNING_PROFILES)[number];

/** The spec's rate-limited endpoints (spec Limits), whose per-minute limit a platform may override. */
export const RATE_LIMITED_ENDPOINTS = ['discovery', 'authorize', 'token', 'userinfo', 'jwks', 'introspect', 'revoke'] as const;
export type RateLimitedEndpoint = (typeof RATE_LIMITED_ENDPOINTS)[number];

/** Requests per minute, exactly the spec's table (spec Limits). */
export const RATE_LIMITS: Readonly<Record<string, number>> = {
  discovery: 100,
  authorize: 60,
  token: 120,
  userinfo: 120,
  jwks: 100,
  introspect: 120,
  revoke: 60,
} satisfies Record<RateLimitedEndpoint, number>;

/**
 * The platform's issuer: `BASE_URL` exactly for `seed` (the spec), and
 * `BASE_URL/platforms/{platform_guid}` for `standard`, so that a relying party derives discovery
 * from the issuer alone. The same string in discovery, every token's `iss` and the authorization
 * response's `iss`.
 */
export const issuerOf = (baseUrl: string, platform: Pick<Platform, 'id' | 'signingProfile'>): string =>
  platform.signingProfile === 'standard' ? `${baseUrl}/platforms/${platform.id}` : baseUrl;
