import { digest } from '../../crypto/digest';
import { dummyPasswordHash, verifyPassword } from '../../crypto/passwords';
import { newAuthorizationCode, newTimeOrderedId } from '../../crypto/random';
import * as codes from '../../repositories/authorization-code.repository';
import * as consents from '../../repositories/consent.repository';
import * as tokens from '../../repositories/token.repository';
import { createSidOf } from '../session-id';
import * as users from '../../repositories/user.repository';
import * as clients from '../../repositories/client.repository';
import { NO_CLIENT_BRANDING, type ClientBranding } from '../../domain/branding';
import { isSelfRegistered, type SelfRegisteredClient } from '../../domain/client';
import { isLocalhostRedirectUri, isLoopbackIpRedirectUri } from '../redirect-uris';
import type { User } from '../../domain/user';
import type { Queryable } from '../../db';
import type { Deps } from '../deps';
import { formatScope } from '../scopes';
import { consentEntriesOf, type AuthorizationRequest } from '../../domain/authorization-request';
import { acrOf, amrOf, amrToText, type AuthMethod } from '../../domain/mfa';
import type { CredentialCheck } from '../attempt-throttle.service';
import { createSecurityEvents, type SecurityOrigin } from '../security-events';
import type { BackchannelLogout } from '../backchannel-logout.service';

/**
 * The user's side of an authorization grant (RFC 6749 §1.3): credentials, consent, the code, and
 * signing out. Spread into `s.authorize`; the sign-in pages' flow is src/services/interaction/.
 */
export function createAuthorizationGrant(deps: Deps, backchannel: Pick<BackchannelLogout, 'enqueueForSession'>) {
  const events = createSecurityEvents(deps);
  const sidOf = createSidOf(deps.config.masterKey!); // the app refuses to start without one

  /**
   * The user when email and password match; otherwise the account the email named, if any (the
   * audit log's subject of a failed sign-in, without a second read). Constant-ish time.
   */
  async function checkCredentials(platformId: string, email: string, password: string): Promise<CredentialCheck> {
    const user = await users.findByEmail(deps.db, platformId, email);
    // Verify against a dummy hash for unknown emails, so timing does not tell them apart.
    const ok = await verifyPassword(user?.passwordHash ?? (await dummyPasswordHash(deps.config.argon2)), password);
    // A disabled account (admin user disable) fails like a wrong password: the page says nothing more.
    if (user && ok && user.disabledAt) return { ok: false, userId: user.id, disabled: true };
    return user && ok ? { ok: true, user } : { ok: false, userId: user?.id ?? null };
  }

  return {
    checkCredentials,

    /** What the consent page shows of the app besides its name: logo and links, or none. */
    async clientBranding(platformId: string, clientId: string): Promise<ClientBranding> {
      const client = await clients.findById(deps.db, platformId, clientId);
      return client
        ? { logoUri: client.logoUri, clientUri: client.clientUri, policyUri: client.policyUri, tosUri: client.tosUri }
        : NO_CLIENT_BRANDING;
    },

    /** What the consent page adds for a client that registered itself (its address, loopback-only redirects); undefined for an operator's. */
    async selfRegisteredClient(platformId: string, clientId: string): Promise<SelfRegisteredClient | undefined> {
      const client = await clients.findById(deps.db, platformId, clientId);
      if (!client || !isSelfRegistered(client)) return undefined;
      const onThisDevice = (uri: string) => isLoopbackIpRedirectUri(uri) || isLocalhostRedirectUri(uri);
      return {
        clientUri: client.clientUri,
        redirectsOnlyToThisDevice: client.redirectUris.length > 0 && client.redirectUris.every(onThisDevice),
      };
    },

    /** The user when email and password match; undefined otherwise, in constant-ish time. */
    async verifyCredentials(platformId: string, email: string, password: string): Promise<User | undefined> {
      const check = await checkCredentials(platformId, email, password);
      return check.ok ? check.user : undefined;
    },

    /** Remembers consent for the requested scopes and resources (asked again only for new ones); consent.granted with `origin`. */
    async grantConsent(req: AuthorizationRequest, userId: string, origin?: SecurityOrigin): Promise<void> {
      const grant = (q: Queryable) =>
        consents.upsertScopes(
          q,
          { platformId: req.platformId, userId, clientId: req.clientId, scopes: consentEntriesOf(req) },
          deps.now(),
        );
      if (!origin) return void (await grant(deps.db));
      await deps.db.transaction(async (trx) => {
        await grant(trx);
        await events.record(trx, origin, 'consent.granted', userId, { scopes: req.scopes });
      });
    },

    /** A single-use code bound to client, redirect_uri, PKCE challenge, nonce, scopes, resources and auth_time. */
    async issueCode(
      req: AuthorizationRequest,
      user: User,
      authTime: number,
      browserSessionId: string,
      methods: string[] = ['pwd'],
    ): Promise<string> {
      const code = newAuthorizationCode();
      const amr = amrOf(methods as AuthMethod[]); // amr and acr in the ID token
      const now = deps.now();
      // The app joins this browser sign-in (sid), so that signing out reaches it.
      const sid = sidOf(browserSessionId, user.id);
      await codes.insertJoiningSession(
        deps.db,
        digest(code),
        {
          id: newTimeOrderedId(),
          platformId: req.platformId,
          clientId: req.clientId,
          userId: user.id,
          redirectUri: req.redirectUri,
          scope: formatScope(req.scopes),
          resources: (req.resources ?? []).map((r) => r.uri),
          nonce: req.nonce ?? null,
          codeChallenge: req.codeChallenge ?? null,
          authTime: new Date(authTime * 1000),
          browserSessionId,
          amr: amrToText(amr),
          acr: acrOf(amr),
          expiresAt: new Date(now.getTime() + deps.config.codeTtlSeconds * 1000),
        },
        sid,
        now,
      );
      return code;
    },

    /**
     * Spec Authentication 8: signing out revokes the refresh tokens issued through this browser.
     * The apps this sign-in reached get a back-channel logout token, written in the
     * same transaction; with `origin`, a `logout` event too; `via` says which page.
     */
    async signOut(
      platformId: string,
      userId: string,
      browserSessionId: string,
      origin?: SecurityOrigin,
      via = 'account_page',
    ): Promise<void> {
      await deps.db.transaction(async (trx) => {
        await backchannel.enqueueForSession(trx, platformId, userId, browserSessionId); // before the revocation: it reads the live tokens
        const revoked = await tokens.revokeByBrowserSession(trx, platformId, userId, browserSessionId, deps.now());
        if (origin) await events.record(trx, origin, 'logout', userId, { via, refresh_tokens_revoked: revoked });
      });
    },
  };
}

export type AuthorizationGrant = ReturnType<typeof createAuthorizationGrant>;
