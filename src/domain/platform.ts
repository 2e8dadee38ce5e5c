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
  /** Standard platforms: who may register a client through RFC 7591 (always `off` on seed). */
  registration: RegistrationPolicy;
  /** Standard platforms: `off`, `on` or host patterns, stored as parseClientMetadataDocuments returns it. */
  clientMetadataDocuments: string;
  createdAt: Date;
}

/**
 * RFC 7591 dynamic registration: off (no endpoint), token (an initial access token made by an
 * operator, RFC 7591 §3), open (anyone, rate-limited per source).
 */
export const REGISTRATION_POLICIES = ['off', 'token', 'open'] as const;
export type RegistrationPolicy = (typeof REGISTRATION_POLICIES)[number];

/** One host name (`app.example.org`) or every subdomain of one (`*.example.com`), in lower case. */
const HOST_PATTERN =
  /^(\*\.)?(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)+$/;
const MAX_HOST_PATTERNS = 50;

/**
 * Which `client_id` URLs may be fetched as client ID metadata documents: `off`, `on` (any https
 * URL) or host patterns separated by spaces. Returns the stored form (lower case, one space,
 * no repeats) or why the value is refused.
 */
export function parseClientMetadataDocuments(
  value: string,
): { ok: true; value: string } | { ok: false; reason: string } {
  const trimmed = value.trim().toLowerCase();
  if (trimmed === 'off' || trimmed === 'on') return { ok: true, value: trimmed };
  const patterns = [...new Set(trimmed.split(/\s+/).filter(Boolean))];
  if (patterns.length === 0)
    return { ok: false, reason: 'must be off, on, or host patterns such as "*.example.com app.example.org"' };
  if (patterns.length > MAX_HOST_PATTERNS) return { ok: false, reason: `at most ${MAX_HOST_PATTERNS} host patterns` };
  const bad = patterns.find((p) => !HOST_PATTERN.test(p));
  if (bad)
    return {
      ok: false,
      reason: `"${bad.slice(0, 100)}" is not a host name or *.host pattern (off, on, or names such as "*.example.com app.example.org")`,
    };
  return { ok: true, value: patterns.join(' ') };
}

export const SIGNING_PROFILES = ['seed', 'standard'] as const;
export type SigningProfile = (typeof SIGNING_PROFILES)[number];

/** The spec's rate-limited endpoints (spec Limits), whose per-minute limit a platform may override. */
export const RATE_LIMITED_ENDPOINTS = [
  'discovery',
  'authorize',
  'token',
  'userinfo',
  'jwks',
  'introspect',
  'revoke',
] as const;
export type RateLimitedEndpoint = (typeof RATE_LIMITED_ENDPOINTS)[number];

/** Requests per minute, exactly the spec's table (spec Limits). */
const SPEC_RATE_LIMITS = {
  discovery: 100,
  authorize: 60,
  token: 120,
  userinfo: 120,
  jwks: 100,
  introspect: 120,
  revoke: 60,
} satisfies Record<RateLimitedEndpoint, number>;

/**
 * The spec's limits, and those of the endpoints standard platforms add: the device authorization
 * endpoint (RFC 8628) counts per client like the token endpoint it feeds, at the token's rate.
 */
export const RATE_LIMITS: Readonly<Record<string, number>> = {
  ...SPEC_RATE_LIMITS,
  device_authorization: SPEC_RATE_LIMITS.token,
};

/**
 * The platform's issuer: `BASE_URL` exactly for `seed` (the spec), and
 * `BASE_URL/platforms/{platform_guid}` for `standard`, so that a relying party derives discovery
 * from the issuer alone. The same string in discovery, every token's `iss` and the authorization
 * response's `iss`.
 */
export const issuerOf = (baseUrl: string, platform: Pick<Platform, 'id' | 'signingProfile'>): string =>
  platform.signingProfile === 'standard' ? `${baseUrl}/platforms/${platform.id}` : baseUrl;
