import { issuerOf, type Platform } from '../domain/platform';
import * as clients from '../repositories/client.repository';
import * as sessionClients from '../repositories/session-client.repository';
import type { Deps } from './deps';

/**
 * OpenID Connect Front-Channel Logout 1.0: the URLs the signed-out page loads in hidden iframes,
 * one per application this browser's sign-in of each user reached (session_clients) that
 * registered a frontchannel_logout_uri.
 */
export function createFrontchannelLogout(deps: Deps) {
  return {
    /**
     * The front-channel logout URLs of these users' sign-ins in this browser session. Call it BEFORE
     * signing out: sign-out forgets the session's applications. `iss` and `sid` are always added
     * (§2–3 require them when frontchannel_logout_session_required; harmless otherwise), the
     * registered URI's own query parameters kept. Throws nothing.
     */
    async urlsFor(
      platform: Pick<Platform, 'id' | 'signingProfile'>,
      userIds: string[],
      browserSessionId: string,
    ): Promise<string[]> {
      const iss = issuerOf(deps.config.baseUrl, platform);
      const urls: string[] = [];
      const uriOf = new Map<string, string | null>(); // one lookup per client
      for (const userId of new Set(userIds)) {
        for (const row of await sessionClients.listBySession(deps.db, platform.id, userId, browserSessionId)) {
          if (!uriOf.has(row.clientId))
            uriOf.set(
              row.clientId,
              (await clients.findById(deps.db, platform.id, row.clientId))?.frontchannelLogoutUri ?? null,
            );
          const registered = uriOf.get(row.clientId);
          const url = registered ? withSession(registered, iss, row.sid) : undefined;
          if (url && !urls.includes(url)) urls.push(url);
        }
      }
      return urls;
    },
  };
}

/** The registered URI with iss and sid set (§2); undefined when it is not an http(s) URL (never framed). */
function withSession(registered: string, iss: string, sid: string): string | undefined {
  let url: URL;
  try {
    url = new URL(registered);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return undefined;
  url.hash = ''; // §2: the URI must not carry a fragment
  url.searchParams.set('iss', iss);
  url.searchParams.set('sid', sid);
  return url.toString();
}

export type FrontchannelLogout = ReturnType<typeof createFrontchannelLogout>;
