/** Scopes (OIDC Core 5.4): pure rules shared by services and presenters. */
/** The spec's scopes, in its order. */
export const SUPPORTED_SCOPES = ['openid', 'profile', 'email', 'phone', 'address', 'offline_access'] as const;
export type Scope = (typeof SUPPORTED_SCOPES)[number];

export const isSupportedScope = (s: string): s is Scope => (SUPPORTED_SCOPES as readonly string[]).includes(s);

export const parseScope = (scope: string | undefined): string[] => [
  ...new Set((scope ?? '').split(/[ +]+/).filter(Boolean)),
];

/** Spec scope rule 1: requested ∩ allowed ∩ supported, in canonical order; the rest is dropped silently. */
export function narrowScopes(requested: string[], allowed: string[]): Scope[] {
  return SUPPORTED_SCOPES.filter((s) => requested.includes(s) && allowed.includes(s));
}

export const formatScope = (scopes: readonly string[]): string => scopes.join(' ');
