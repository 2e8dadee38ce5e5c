import { digest, safeEqual } from '../../crypto/digest';
import { newClientSecret, newId, randomToken } from '../../crypto/random';
import type { AuditContext } from '../../domain/audit';
import { isSelfRegistered, shownOnConsentChanged, type Client, type ClientInformation } from '../../domain/client';
import { isUuid } from '../../domain/ids';
import type { Platform } from '../../domain/platform';
import { registrationTokenId } from '../../domain/registration-token';
import { invalidRequest, invalidToken, OAuthError } from '../../errors';
import * as clients from '../../repositories/client.repository';
import * as registrationTokens from '../../repositories/registration-token.repository';
import type { Audit } from '../audit.service';
import * as consents from '../../repositories/consent.repository';
import type { ClientAuth } from '../client-auth.service';
import type { Deps } from '../deps';
import type { Platforms } from '../platforms.service';
import { checkClientMetadata, type CheckedClientMetadata } from './client-metadata';

const noEndpoint = () => new OAuthError('not_found', 'This platform does not accept client registrations');
const badInitialToken = () => invalidToken('the initial access token is missing, unknown, expired, revoked or used up');
const badRegistrationToken = () =>
  invalidToken('the registration access token is missing or not valid for this client');

/** `lk_rat_` + 256 bits: the registration access token of RFC 7592, kept as its SHA-256 digest. */
const newRegistrationAccessToken = () => `lk_rat_${randomToken(32)}`;

/**
 * RFC 7591 dynamic registration and RFC 7592 management on standard platforms, as the platform's
 * `registration` policy allows (off: no endpoint). Each change is audited with the caller as an
 * anonymous actor known by its source address.
 */
export function createDynamicRegistration(deps: Deps, platforms: Platforms, clientAuth: ClientAuth, audit: Audit) {
  /** The endpoint exists only on a standard platform whose policy is token or open; else not_found. */
  function assertEnabled(platform: Platform): void {
    if (platform.signingProfile !== 'standard' || platform.registration === 'off') throw noEndpoint();
  }

  /** The registration itself, once the endpoint is known to exist; every refusal is an OAuthError. */
  async function registerChecked(
    platform: Platform,
    bearer: string | undefined,
    body: unknown,
    ctx: AuditContext,
  ): Promise<ClientInformation> {
    const tokenId = platform.registration === 'token' ? await checkInitialToken(platform, bearer) : undefined;
    const checked = checkClientMetadata(body, platform);
    const secret = checked.type === 'confidential' ? newClientSecret() : null;
    const registrationAccessToken = newRegistrationAccessToken();
    const client = await deps.db.transaction(async (trx) => {
      if (tokenId && !(await registrationTokens.spendUse(trx, platform.id, tokenId, deps.now())))
        throw badInitialToken();
      const c = await clients.insertDynamic(trx, {
        id: newId(),
        platformId: platform.id,
        ...stored(checked),
        sealedSecret: secret ? deps.sealer.seal(secret) : null,
        registrationAccessTokenHash: digest(registrationAccessToken),
        createdAt: deps.now(),
      });
      const details = { ...auditDetails(c), ...(tokenId ? { registration_token_id: tokenId } : {}) };
      await audit.record(trx, ctx, { kind: 'client.registered', platformId: platform.id, clientId: c.id, details });
      return c;
    });
    return { client, secret, registrationAccessToken };
  }

  /** The initial access token's id once its digest matches (constant time); else invalid_token. */
  async function checkInitialToken(platform: Platform, bearer: string | undefined): Promise<string> {
    const id = bearer === undefined ? undefined : registrationTokenId(bearer);
    const stored = id ? await registrationTokens.findHash(deps.db, platform.id, id) : undefined;
    if (!id || !stored || !safeEqual(digest(bearer!), stored)) throw badInitialToken();
    return id;
  }

  /** The dynamic client whose registration access token this is (compared in constant time); else invalid_token. */
  async function authenticate(platform: Platform, clientId: string, bearer: string | undefined): Promise<Client> {
    assertEnabled(platform);
    const stored = isUuid(clientId)
      ? await clients.findRegistrationAccessTokenHash(deps.db, platform.id, clientId)
      : undefined;
    // An operator's client has no registration access token: it is managed by operators only.
    if (!stored || bearer === undefined || !safeEqual(digest(bearer), stored)) throw badRegistrationToken();
    return (await clients.findById(deps.db, platform.id, clientId))!;
  }

  const auditDetails = (c: Client) => ({
    name: c.name,
    type: c.type,
    application_type: c.registration?.applicationType,
    redirect_uris: c.redirectUris,
    scopes: c.allowedScopes.join(' '),
    token_endpoint_auth_method: c.registration?.tokenEndpointAuthMethod,
    software_id: c.registration?.softwareId,
    client_uri: c.clientUri,
  });

  const stored = (m: CheckedClientMetadata) => ({
    name: m.name,
    type: m.type,
    redirectUris: m.redirectUris,
    postLogoutRedirectUris: [],
    allowedScopes: m.allowedScopes,
    isResourceServer: false,
    clientUri: m.clientUri,
    logoUri: m.logoUri,
    tosUri: m.tosUri,
    policyUri: m.policyUri,
    registration: m.registration,
  });

  return {
    assertEnabled,

    /**
     * RFC 7591 §3: registers a client from its metadata. `token` policy: the bearer must be a live
     * initial access token, whose use is spent in the same transaction as the insert. Throws
     * not_found (off), invalid_token, invalid_client_metadata, invalid_redirect_uri; stores nothing then.
     */
    async register(
      platform: Platform,
      bearer: string | undefined,
      body: unknown,
      ctx: AuditContext,
    ): Promise<ClientInformation> {
      assertEnabled(platform);
      try {
        return await registerChecked(platform, bearer, body, ctx);
      } catch (err) {
        // A refusal stores nothing but its audit event: the reason, never the body (after the per-source rate limit).
        if (err instanceof OAuthError) {
          await audit.record(deps.db, ctx, {
            kind: 'client.registration_refused',
            platformId: platform.id,
            details: { error: err.code, reason: err.description.slice(0, 200) },
          });
        }
        throw err;
      }
    },

    /** RFC 7592 §2.1: the client's current registration. Throws not_found (off), invalid_token. */
    async read(platform: Platform, clientId: string, bearer: string | undefined): Promise<ClientInformation> {
      const client = await authenticate(platform, clientId, bearer);
      return { client, secret: platforms.clientSecret(client), registrationAccessToken: bearer! };
    },

    /**
     * RFC 7592 §2.2: replaces the metadata (fields left out fall back to their defaults), checked as
     * a registration is. `client_id` must be the client's; a `client_secret` sent must be its own.
     * Becoming confidential makes a secret; becoming public drops it.
     */
    async replace(
      platform: Platform,
      clientId: string,
      bearer: string | undefined,
      body: unknown,
      ctx: AuditContext,
    ): Promise<ClientInformation> {
      const before = await authenticate(platform, clientId, bearer);
      const m = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
      if (m.client_id !== before.id)
        throw invalidRequest("client_id: must be the client's own client_id (RFC 7592 §2.2)");
      const currentSecret = platforms.clientSecret(before);
      if (
        m.client_secret !== undefined &&
        (typeof m.client_secret !== 'string' || currentSecret === null || !safeEqual(m.client_secret, currentSecret))
      ) {
        throw invalidRequest("client_secret: does not match the client's secret (RFC 7592 §2.2)");
      }
      const checked = checkClientMetadata(body, platform);
      const secret = checked.type === 'confidential' ? (currentSecret ?? newClientSecret()) : null;
      const client = await deps.db.transaction(async (trx) => {
        const updated = await clients.update(trx, platform.id, before.id, {
          ...stored(checked),
          sealedSecret: secret === currentSecret ? undefined : secret ? deps.sealer.seal(secret) : null,
          ...(secret ? {} : { previousSealedSecret: null, previousSecretExpiresAt: null }),
        });
        // People consented to what consent showed them: a new name, logo, home page or place to
        // send them back to asks them again (docs/decisions.md, "Agent-ready authorization").
        const consentsCleared = shownOnConsentChanged(before, updated)
          ? await consents.removeForClient(trx, before.id)
          : 0;
        await audit.record(trx, ctx, {
          kind: 'client.updated',
          platformId: platform.id,
          clientId: before.id,
          details: { registration_replaced: auditDetails(updated), consents_cleared: consentsCleared },
        });
        return updated;
      });
      clientAuth.forget(client.id);
      return { client, secret, registrationAccessToken: bearer! };
    },

    /** RFC 7592 §2.3: the client goes, with its codes, tokens and consents. Throws not_found (off), invalid_token. */
    async remove(platform: Platform, clientId: string, bearer: string | undefined, ctx: AuditContext): Promise<void> {
      const client = await authenticate(platform, clientId, bearer);
      await deps.db.transaction(async (trx) => {
        const removed = await clients.deleteWithGrants(trx, platform.id, client.id);
        await audit.record(trx, ctx, {
          kind: 'client.deleted',
          platformId: platform.id,
          clientId: client.id,
          details: {
            name: client.name,
            type: client.type,
            by: 'registration_access_token',
            refresh_token_families: removed.refreshFamilies,
            consents: removed.consents,
            authorization_codes: removed.codes,
            device_authorizations: removed.deviceAuthorizations,
          },
        });
      });
      clientAuth.forget(client.id);
    },

    /** A self-registered client completed a token request: it is no longer a candidate for the purge of unused ones. */
    async markFirstUse(client: Client): Promise<void> {
      if (isSelfRegistered(client) && client.lastUsedAt === null)
        await clients.markFirstUse(deps.db, client.id, deps.now());
    },
  };
}

export type DynamicRegistration = ReturnType<typeof createDynamicRegistration>;
