import { safeEqual } from '../crypto/digest';
import { isUuid } from '../domain/ids';
import * as clients from '../repositories/client.repository';
import type { Client } from '../domain/client';
import type { Platform } from '../domain/platform';
import type { Notifications } from '../db/notifications';
import type { Deps } from './deps';
import type { Platforms } from './platforms.service';
import { coherentTtlMs, createTtlCache, perPlatformBounds } from './ttl-cache';
import type { ClientMetadataDocuments } from './client-metadata-documents.service';
import { namesMetadataDocument } from '../domain/client-metadata-document';
import { JWT_BEARER_ASSERTION_TYPE } from '../domain/client-assertion';
import type { AuditContext } from '../domain/audit';
import type { ClientAssertions } from './client-assertion/client-assertion.service';
import {
  invalidClient,
  presentedCredentials,
  type AuthMethod,
  type ClientCredentials,
  type Presented,
} from './client-credentials';

const CLIENT_CACHE_MS = 60_000;

interface CachedClient {
  client: Client;
  secret: string | null;
  /** After a rotation, the secret before it, accepted until `previousUntil`. */
  previous: string | null;
  previousUntil: Date | null;
}

export function createClientAuth(
  deps: Deps,
  platforms: Platforms,
  metadataDocuments: ClientMetadataDocuments,
  assertions: ClientAssertions,
  notifications?: Notifications,
) {
  // A short cache spares a query and an unseal per request. An admin change (update, rotation,
  // deletion) calls forget() here, and other instances hear of it by NOTIFY (clients_changed).
  // Keyed by client id (the table's primary key): an entry answers for its own platform only.
  // An unknown client is not cached: one registered a moment later is found at once.
  const cache = createTtlCache<CachedClient | undefined>(deps.now, {
    ttlMs: coherentTtlMs(notifications, CLIENT_CACHE_MS),
    ...perPlatformBounds(deps.config),
  });
  function forget(clientId: string) {
    cache.delete(clientId);
    platforms.forgetClient(clientId);
    assertions.forget(clientId); // a changed jwks_uri (or a deleted client) keeps no cached key set
  }
  notifications?.subscribe('latchkey_cache', {
    onMessage: (payload) => payload.startsWith('client:') && forget(payload.slice(7)),
    // Notifications may have been missed: start over.
    onListening: () => cache.clear(),
  });

  async function findClient(platformId: string, id: string) {
    const hit = cache.get(id);
    if (hit) return hit.value?.client.platformId === platformId ? hit.value : undefined;
    return cache.reload(
      id,
      () => loadClient(platformId, id),
      (entry) => entry !== undefined,
    );
  }

  async function loadClient(platformId: string, id: string): Promise<CachedClient | undefined> {
    const client = await clients.findById(deps.db, platformId, id);
    if (!client) return undefined;
    const previous = client.previousSealedSecret
      ? deps.sealer.unseal(client.previousSealedSecret).toString('utf8')
      : null;
    return { client, secret: platforms.clientSecret(client), previous, previousUntil: client.previousSecretExpiresAt };
  }

  /**
   * The presented secret against the current one and, during a rotation's overlap, the previous
   * one: both compared in constant time, always both, so the time taken tells nothing of which matched.
   */
  function secretMatches(found: CachedClient, presented: string): boolean {
    const current = found.secret !== null && safeEqual(found.secret, presented);
    const previousLive =
      found.previous !== null && found.previousUntil !== null && found.previousUntil.getTime() > deps.now().getTime();
    const previous = safeEqual(found.previous ?? found.secret ?? '', presented) && previousLive;
    return current || previous;
  }

  /**
   * Decides the client and its method from the request: a secret (Basic or body), an assertion
   * (private_key_jwt, standard platforms; a client with keys has no other way), or none for a
   * public client where allowed. Throws invalid_request / invalid_client.
   */
  async function authenticate(
    platform: Platform,
    creds: ClientCredentials,
    options: { allowPublic: boolean },
    ctx: AuditContext = { actorType: 'anonymous' },
  ): Promise<{ client: Client; method: AuthMethod }> {
    const presented = presentedCredentials(platform, creds);
    const { id, method, isBasic } = presented;
    if (!id) throw invalidClient(isBasic, 'Client authentication is required: send client_id');
    if (namesMetadataDocument(platform, id)) {
      // A public client by its document (kept fresh by its cache headers): `none` only, refused before any fetch.
      if (method !== 'none') throw invalidClient(isBasic, 'A client metadata document client has no secret; use PKCE');
      if (!options.allowPublic) throw invalidClient(false, 'This endpoint is for confidential clients');
      return { client: await metadataDocuments.storedClient(platform, id, ctx), method };
    }
    const found = isUuid(id) ? await findClient(platform.id, id) : undefined;
    if (!found) throw invalidClient(isBasic, 'Unknown client');
    const { client } = found;
    if (client.type === 'public') {
      if (method === 'private_key_jwt') throw invalidClient(false, 'A public client has no keys; use PKCE');
      if (method !== 'none') throw invalidClient(isBasic, 'A public client has no secret; use PKCE');
      if (!options.allowPublic) throw invalidClient(false, 'This endpoint is for confidential clients');
      return { client, method };
    }
    await proveConfidential(platform, found, presented, ctx);
    return { client, method };
  }

  /**
   * A confidential client proves itself with its keys when it has them (private_key_jwt only, on a
   * standard platform: docs/decisions.md, "Machine and device clients"), else with its secret.
   */
  async function proveConfidential(platform: Platform, found: CachedClient, presented: Presented, ctx: AuditContext) {
    const { client } = found;
    const { assertion, isBasic, method, secret } = presented;
    const hasKeys = platform.signingProfile === 'standard' && (client.jwks !== null || client.jwksUri !== null);
    if (hasKeys) {
      if (!assertion)
        throw invalidClient(
          isBasic,
          `This client authenticates with private_key_jwt: send client_assertion_type=${JWT_BEARER_ASSERTION_TYPE} and a client_assertion signed with its key`,
        );
      return assertions.verify(platform, client, assertion, ctx);
    }
    if (assertion)
      throw invalidClient(false, 'This client has no registered keys (jwks or jwks_uri): authenticate with its secret');
    if (method === 'none') throw invalidClient(false, 'A confidential client must authenticate with its secret');
    if (!found.secret || !secretMatches(found, secret ?? '')) throw invalidClient(isBasic);
  }

  return { authenticate, forget };
}

export type ClientAuth = ReturnType<typeof createClientAuth>;
