import { decodeJwt } from 'jose';
import { isAccessTokenJwt } from '../crypto/jwt';
import { idTokenHintClaims } from './id-token-hint';
import { invalidRequest } from '../errors';
import { isUuid } from '../domain/ids';
import * as clients from '../repositories/client.repository';
import { wireClientId, type Client } from '../domain/client';
import type { Platform } from '../domain/platform';
import * as tokens from '../repositories/token.repository';
import type { Deps } from './deps';
import type { Platforms } from './platforms.service';
import { matchRedirectUri } from './redirect-uris';
import type { SigningKeys } from './signing-keys.service';
import { createSecurityEvents, type SecurityOrigin } from './security-events';
import type { BackchannelLogout } from './backchannel-logout.service';

export interface LogoutParams {
  id_token_hint?: string;
  client_id?: string;
  post_logout_redirect_uri?: string;
  state?: string;
}

/** A checked RP-initiated logout request. */
export interface LogoutRequest {
  client?: Client;
  /** The subject of a valid id_token_hint: the request comes from an app this user signed in to. */
  hintSub?: string;
  /** Registered for the client (matchRedirectUri); absent → the provider's own signed-out page. */
  redirectUri?: string;
  state?: string;
}

/** OpenID Connect RP-Initiated Logout 1.0. */
export function createLogout(
  deps: Deps,
  keys: SigningKeys,
  platforms: Platforms,
  backchannel: Pick<BackchannelLogout, 'enqueueForSession'>,
) {
  const events = createSecurityEvents(deps);

  /** Verifies an ID token we issued to the client (expired is fine, §2); else invalid_request. */
  async function subjectOf(platform: Platform, client: Client, hint: string): Promise<string> {
    const claims = await idTokenHintClaims(deps, keys, platforms, platform, client, hint);
    const aud = claims && (Array.isArray(claims.aud) ? claims.aud : [claims.aud]);
    if (!claims || !isUuid(claims.sub) || !aud?.includes(wireClientId(client)))
      throw invalidRequest('id_token_hint is not a valid ID token of this application');
    // A public client's access token is signed with the same platform key: refuse it by its kind.
    if (isAccessTokenJwt(hint, claims)) throw invalidRequest('id_token_hint is not an ID token');
    return claims.sub;
  }

  /** The client named by client_id or, failing that, by the hint's audience (read before verification). */
  async function clientOf(platform: Platform, p: LogoutParams): Promise<Client | undefined> {
    let clientId = p.client_id;
    if (p.id_token_hint) {
      let hintAud: string[];
      try {
        const aud = decodeJwt(p.id_token_hint).aud;
        hintAud = Array.isArray(aud) ? aud : aud ? [aud] : [];
      } catch {
        throw invalidRequest('id_token_hint is not a valid ID token');
      }
      // §2: when both are sent, client_id must be the hint's audience.
      if (clientId && !hintAud.includes(clientId))
        throw invalidRequest('client_id does not match the audience of id_token_hint');
      clientId ??= hintAud[0];
    }
    if (!clientId) return undefined;
    // A metadata document's client is named by its URL; its stored row is enough here (nothing is fetched).
    const client = isUuid(clientId)
      ? await clients.findById(deps.db, platform.id, clientId)
      : await clients.findByMetadataDocumentUrl(deps.db, platform.id, clientId);
    if (!client)
      throw invalidRequest('The application that sent you here is not registered with this sign-in service.');
    return client;
  }

  return {
    /** Checks the request; throws invalid_request (shown as a page, never redirected). */
    async validateLogout(platform: Platform, p: LogoutParams): Promise<LogoutRequest> {
      const client = await clientOf(platform, p);
      const hintSub = p.id_token_hint && client ? await subjectOf(platform, client, p.id_token_hint) : undefined;
      let redirectUri: string | undefined;
      if (p.post_logout_redirect_uri !== undefined) {
        if (!client)
          throw invalidRequest('post_logout_redirect_uri needs client_id or id_token_hint to name the application');
        // Matched like an authorization's redirect_uri: exact, except any port on a loopback IP
        // literal (RFC 8252 §7.3), since a native app's listener gets whatever port is free.
        redirectUri = matchRedirectUri(client.postLogoutRedirectUris, p.post_logout_redirect_uri);
        if (!redirectUri) throw invalidRequest('post_logout_redirect_uri is not registered for this application');
      }
      return { client, hintSub, redirectUri, state: p.state };
    },

    /**
     * Revokes the refresh tokens issued through this browser session to these users, and sends the
     * apps those sign-ins reached a back-channel logout token (the app that asked too:
     * Back-Channel Logout §2.7 leaves it to the OP). With `origin` (its clientId: the app that
     * asked), one `logout` event per user. One transaction per user.
     */
    async endBrowserSessions(
      platformId: string,
      userIds: string[],
      browserSessionId: string,
      origin?: SecurityOrigin,
    ): Promise<void> {
      const now = deps.now();
      for (const userId of userIds) {
        await deps.db.transaction(async (trx) => {
          await backchannel.enqueueForSession(trx, platformId, userId, browserSessionId); // before the revocation: it reads the live tokens
          const revoked = await tokens.revokeByBrowserSession(trx, platformId, userId, browserSessionId, now);
          if (origin)
            await events.record(trx, origin, 'logout', userId, {
              via: 'rp_initiated',
              refresh_tokens_revoked: revoked,
            });
        });
      }
    },
  };
}

export type Logout = ReturnType<typeof createLogout>;
