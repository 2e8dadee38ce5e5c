import type { SelfRegisteredClient } from '../domain/client';

/** A URL's host name, or null for one without (a native app's private-use scheme). */
function hostOf(uri: string): string | null {
  try {
    return new URL(uri).hostname || null;
  } catch {
    return null;
  }
}

/**
 * The consent page's part for a client that registered itself (views/partials/self-registered-client.ejs):
 * the host it comes from — its registered home page, else the redirect URI in use — and whether every
 * redirect goes to a loopback address. Null for an operator's client: its page is unchanged
 * (docs/decisions.md, "Agent-ready authorization").
 */
export function presentSelfRegisteredClient(client: SelfRegisteredClient | undefined, redirectUri: string) {
  if (!client) return { selfRegistered: null };
  return {
    selfRegistered: {
      host: (client.clientUri ? hostOf(client.clientUri) : null) ?? hostOf(redirectUri),
      onThisDevice: client.redirectsOnlyToThisDevice,
    },
  };
}
