import type { Knex } from 'knex';
import type { Queryable } from '../db';
import { newClientSecret, newId } from '../crypto/random';
import { importHs512Key } from '../crypto/jwt';
import { invalidRequest } from '../errors';
import { isUuid } from '../domain/ids';
import * as platforms from '../repositories/platform.repository';
import * as clients from '../repositories/client.repository';
import type { Client, ClientType } from '../domain/client';
import type { Deps } from './deps';
import type { Platform, SigningProfile } from '../domain/platform';
import { coherentTtlMs, createTtlCache, perPlatformBounds } from './ttl-cache';
import { BoundedLru } from './bounded-lru';
import type { Notifications } from '../db/notifications';
import { isSupportedScope, parseScope, SUPPORTED_SCOPES } from './scopes';
import { checkRedirectUri } from './redirect-uris';
import type { SigningKeys } from './signing-keys.service';
import { checkSigningAndLogout, type ClientSigningAndLogoutInput } from './client-registration';
import { findUploadedLogo } from './platform-logo';
import { checkClientGrants, type ClientGrantsInput } from './client-grants';
import { DEFAULT_GRANT_TYPES } from '../domain/client';

export interface NewClientInput extends ClientSigningAndLogoutInput, ClientGrantsInput {
  name: string;
  type: ClientType;
  redirectUris: string[];
  postLogoutRedirectUris?: string[];
  scopes: string;
  /** Introspects the tokens of the platform's other clients too; confidential clients only. */
  isResourceServer?: boolean;
}

/**
 * A platform's row, cached: until changed where the platforms_changed NOTIFY reaches every
 * instance, else (the embedded database) for this long.
 */
const PLATFORM_CACHE_MS = 30_000;

/** Platforms, their clients and keys: the operator's side (admin CLI, demo seed, tests). */
export function createPlatforms(deps: Deps, signingKeys: SigningKeys, notifications?: Notifications) {
  const bounds = perPlatformBounds(deps.config);
  // Per client: the key of its current secret.
  const clientKeys = new BoundedLru<string, { sealed: string; key: Promise<CryptoKey> }>({ maxEntries: bounds.max });
  const known = createTtlCache<Platform | undefined>(deps.now, {
    ttlMs: coherentTtlMs(notifications, PLATFORM_CACHE_MS),
    ...bounds,
  });
  notifications?.subscribe('latchkey_cache', {
    onMessage: (payload) => payload.startsWith('platform:') && known.delete(payload.slice('platform:'.length)),
    onListening: () => known.clear(), // notifications may have been missed: start over
  });
  return {
    /** A platform with its first active HS512 key and, for the standard profile, one key per asymmetric alg. */
    async createPlatform(name: string, q?: Knex.Transaction, signingProfile: SigningProfile = 'seed') {
      if (!name.trim()) throw invalidRequest('platform name must not be empty');
      const create = async (trx: Knex.Transaction) => {
        const platform = await platforms.insert(trx, { id: newId(), name: name.trim(), signingProfile });
        const kid = await signingKeys.rotate(trx, platform.id);
        const asymmetricKids =
          signingProfile === 'standard' ? await signingKeys.ensureAsymmetricKeys(trx, platform.id) : {};
        return { platform, kid, asymmetricKids };
      };
      return q ? create(q) : deps.db.transaction(create);
    },

    /** How many platforms exist (the demo seed runs on an empty database only). */
    count(): Promise<number> {
      return platforms.count(deps.db);
    },

    /** The uploaded logo of a platform (public: the pages load it), or undefined for none or a malformed id. */
    findUploadedLogo(platformId: string) {
      return findUploadedLogo(deps.db, platformId);
    },

    /** Drops the cached platform after a change: this instance sees it at once, others by NOTIFY (or within PLATFORM_CACHE_MS). */
    forget(id: string) {
      known.delete(id);
    },

    /**
     * The one way in for a request's platform (resolvePlatform, the rate limiter, an interaction):
     * cached (unknown ids too, so one request reads it at most once) until changed.
     */
    findPlatform: (id: string): Promise<Platform | undefined> =>
      isUuid(id) ? known.getOrLoad(id, () => platforms.findById(deps.db, id)) : Promise.resolve(undefined),

    /** The platform as cached now, without waiting (the rate limiter's fast path); undefined when it would need a read. */
    cachedPlatform: (id: string): { value: Platform | undefined } | undefined =>
      isUuid(id) ? known.get(id) : { value: undefined },

    async requirePlatform(id: string) {
      const platform = await this.findPlatform(id);
      if (!platform) throw invalidRequest(`unknown platform "${id}"`);
      return platform;
    },

    /** Registers a client; confidential ones get a 64-octet secret, returned once and stored sealed. */
    async createClient(
      platformId: string,
      input: NewClientInput,
      q: Queryable = deps.db,
    ): Promise<{ client: Client; secret: string | null }> {
      const platform = isUuid(platformId) ? await platforms.findById(q, platformId) : undefined;
      if (!platform) throw invalidRequest(`unknown platform "${platformId}"`);
      const checked = checkClientInput(input);
      const context = {
        signingProfile: platform.signingProfile,
        type: checked.type,
        isProduction: deps.config.isProduction,
      };
      const signingAndLogout = checkSigningAndLogout(input, context);
      const grants = checkClientGrants(
        {
          grantTypes: input.grantTypes ?? DEFAULT_GRANT_TYPES,
          jwks: input.jwks ?? null,
          jwksUri: input.jwksUri ?? null,
          tokenExchangeResources: input.tokenExchangeResources ?? [],
        },
        { ...context, idTokenAlg: signingAndLogout.idTokenSignedResponseAlg },
      );
      // A client with keys proves itself with them (private_key_jwt): it has no secret to leak.
      const secret = checked.type === 'confidential' && !grants.jwks && !grants.jwksUri ? newClientSecret() : null;
      const client = await clients.insert(q, {
        id: newId(),
        platformId,
        ...checked,
        ...signingAndLogout,
        ...grants,
        sealedSecret: secret ? deps.sealer.seal(secret) : null,
      });
      return { client, secret };
    },

    /** Drops the cached ID-token key of a client whose secret changed or that was deleted. */
    forgetClient(id: string) {
      clientKeys.delete(id);
    },

    async rotateKey(platformId: string): Promise<string> {
      await this.requirePlatform(platformId);
      return deps.db.transaction((trx) => signingKeys.rotate(trx, platformId));
    },

    async setRateLimit(platformId: string, endpoint: string, perMinute: number | null, q: Queryable = deps.db) {
      // The stored overrides, not the cached ones, read in `q` (one connection: the embedded database has one).
      const platform = isUuid(platformId) ? await platforms.findById(q, platformId) : undefined;
      if (!platform) throw invalidRequest(`unknown platform "${platformId}"`);
      const overrides = { ...platform.rateLimitOverrides };
      if (perMinute === null) delete overrides[endpoint];
      else overrides[endpoint] = perMinute;
      await platforms.updateRateLimitOverrides(q, platformId, overrides);
      known.delete(platformId); // this instance sees it at once; others by NOTIFY
      return overrides;
    },

    /** OIDC Core 10.1: the HS512 key of a confidential client's ID tokens is its secret's UTF-8 octets. */
    clientIdTokenKey(client: Client): Promise<CryptoKey> | undefined {
      if (!client.sealedSecret) return undefined;
      // Keyed by id, checked against the sealed secret: a rotated secret never signs with the old key.
      const cached = clientKeys.get(client.id);
      if (cached?.sealed === client.sealedSecret) return cached.key;
      const key = importHs512Key(new TextEncoder().encode(this.clientSecret(client)!));
      clientKeys.set(client.id, { sealed: client.sealedSecret, key });
      return key;
    },

    /**
     * The keys an id_token_hint of a confidential client may be signed with: the current secret and,
     * during a rotation's overlap, the previous one (its ID tokens were issued under it).
     */
    idTokenHintKeys(client: Client): Uint8Array[] {
      if (!client.sealedSecret) return [];
      const keys = [new TextEncoder().encode(this.clientSecret(client)!)];
      if (
        client.previousSealedSecret &&
        client.previousSecretExpiresAt &&
        client.previousSecretExpiresAt > deps.now()
      ) {
        keys.push(new Uint8Array(deps.sealer.unseal(client.previousSealedSecret)));
      }
      return keys;
    },

    /** The client secret in clear, for HS512 ID tokens and authentication. */
    clientSecret(client: Client): string | null {
      return client.sealedSecret ? deps.sealer.unseal(client.sealedSecret).toString('utf8') : null;
    },
  };
}

/**
 * The rules of a client's registration, for creation and for an admin update alike: a name, a
 * known type, at least one redirect URI (each as checkRedirectUri allows), supported scopes
 * including openid, and a resource server only if confidential. Returns the stored form.
 */
export function checkClientInput(input: NewClientInput) {
  if (!input.name.trim()) throw invalidRequest('client name must not be empty');
  if (input.type !== 'confidential' && input.type !== 'public')
    throw invalidRequest('client type must be "confidential" or "public"');
  // A client without the authorization-code grant (a service, a device) signs no one in through a browser.
  const browser = (input.grantTypes ?? DEFAULT_GRANT_TYPES).includes('authorization_code');
  if (browser && input.redirectUris.length === 0) throw invalidRequest('at least one redirect URI is required');
  input.redirectUris.forEach(checkRedirectUri);
  (input.postLogoutRedirectUris ?? []).forEach(checkRedirectUri);
  const scopes = parseScope(input.scopes);
  const unknown = scopes.filter((s) => !isSupportedScope(s));
  if (unknown.length) throw invalidRequest(`unknown scope "${unknown[0]}" (supported: ${SUPPORTED_SCOPES.join(' ')})`);
  if (browser && !scopes.includes('openid')) throw invalidRequest('scopes must include openid');
  if (input.isResourceServer && input.type !== 'confidential')
    throw invalidRequest('a resource server must be a confidential client (introspection needs a secret)');
  return {
    name: input.name.trim(),
    type: input.type,
    redirectUris: [...new Set(input.redirectUris)],
    postLogoutRedirectUris: [...new Set(input.postLogoutRedirectUris ?? [])],
    allowedScopes: SUPPORTED_SCOPES.filter((s) => scopes.includes(s)),
    isResourceServer: input.isResourceServer ?? false,
  };
}

export type Platforms = ReturnType<typeof createPlatforms>;
