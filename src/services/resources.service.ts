import type { Knex } from 'knex';
import type { Queryable } from '../db';
import type { Notifications } from '../db/notifications';
import { newId } from '../crypto/random';
import { isUuid } from '../domain/ids';
import { isSupportedScope } from '../domain/scopes';
import {
  RESOURCE_NAME_MAX,
  RESOURCE_SCOPE_DESCRIPTION_MAX,
  RESOURCE_SCOPE_NAME,
  RESOURCE_SCOPES_MAX,
  RESOURCE_TOKEN_TTL_MAX,
  RESOURCE_TOKEN_TTL_MIN,
  RESOURCES_PER_PLATFORM_MAX,
  resourceUriProblem,
  type Resource,
  type ResourceScope,
} from '../domain/resource';
import { invalidRequest, OAuthError } from '../errors';
import * as resources from '../repositories/resources.repository';
import type { ResourceFields } from '../repositories/resources.repository';
import type { Deps } from './deps';
import { coherentTtlMs, createTtlCache, perPlatformBounds } from './ttl-cache';

/** What an operator gives to register a resource (admin API, CLI, console). */
export interface ResourceInput {
  uri: string;
  name: string;
  scopes: ResourceScope[];
  /** Absent or empty: every scope the resource defines. */
  defaultScopes?: string[];
  /** Absent or null: the platform's default lifetime. */
  accessTokenTtlSeconds?: number | null;
}

/** A change to a resource: any field; the resource as changed passes the rules of creation. */
export type ResourcePatch = Partial<ResourceInput>;

/** A resource changes only through the admin doors: seen at once here, within 30 s elsewhere without NOTIFY. */
export const RESOURCE_CACHE_MS = 30_000;

const conflict = (description: string) => new OAuthError('invalid_request', description, { status: 409 });
const uriTaken = (uri: string) => conflict(`uri: a resource "${uri}" already exists on this platform`);
const unknownResource = (id: string) => new OAuthError('not_found', `unknown resource "${id}"`);
const unknownPlatform = (id: string) => new OAuthError('not_found', `unknown platform "${id}"`);
// Resources change what a platform's access tokens carry (aud, scopes); a seed platform's interface is fixed (docs/decisions.md, "Agent-ready authorization").
const seedPlatform = () =>
  conflict(
    'resources are for standard platforms only: this platform has the seed signing profile, whose interface is fixed; switch it to the standard profile first',
  );

function checkScopes(scopes: ResourceScope[]): ResourceScope[] {
  if (scopes.length > RESOURCE_SCOPES_MAX) throw invalidRequest(`scopes: at most ${RESOURCE_SCOPES_MAX} scopes`);
  const seen = new Set<string>();
  return scopes.map(({ name, description }) => {
    if (!RESOURCE_SCOPE_NAME.test(name))
      throw invalidRequest(
        `scopes: "${name}" is not a scope name (1–128 characters RFC 6749 §3.3 allows: no spaces, quotes or backslashes)`,
      );
    // One `scope` parameter carries both kinds: an OpenID Connect scope must keep meaning what it means.
    if (isSupportedScope(name))
      throw invalidRequest(`scopes: "${name}" is an OpenID Connect scope; a resource defines its own`);
    if (seen.has(name)) throw invalidRequest(`scopes: "${name}" is given twice`);
    seen.add(name);
    const text = description.trim();
    if (text.length > RESOURCE_SCOPE_DESCRIPTION_MAX)
      throw invalidRequest(
        `scopes: the description of "${name}" has more than ${RESOURCE_SCOPE_DESCRIPTION_MAX} characters`,
      );
    return { name, description: text };
  });
}

/** The rules of a resource, for creation and update alike (docs/decisions.md, "Agent-ready authorization"); returns the stored form. */
export function checkResource(input: ResourceInput): ResourceFields {
  const uri = input.uri.trim();
  const problem = resourceUriProblem(uri);
  if (problem) throw invalidRequest(`uri: ${problem}`);
  const name = input.name.trim();
  if (!name) throw invalidRequest('name: must not be empty');
  if (name.length > RESOURCE_NAME_MAX) throw invalidRequest(`name: at most ${RESOURCE_NAME_MAX} characters`);
  const scopes = checkScopes(input.scopes);
  const defaultScopes = [...new Set(input.defaultScopes ?? [])];
  const outside = defaultScopes.find((s) => !scopes.some((x) => x.name === s));
  if (outside !== undefined) throw invalidRequest(`default_scopes: "${outside}" is not one of the resource's scopes`);
  const ttl = input.accessTokenTtlSeconds ?? null;
  if (ttl !== null && (!Number.isInteger(ttl) || ttl < RESOURCE_TOKEN_TTL_MIN || ttl > RESOURCE_TOKEN_TTL_MAX)) {
    throw invalidRequest(
      `access_token_ttl_seconds: a whole number of seconds from ${RESOURCE_TOKEN_TTL_MIN} to ${RESOURCE_TOKEN_TTL_MAX}, or null for the platform's default`,
    );
  }
  return { uri, name, scopes, defaultScopes, accessTokenTtlSeconds: ttl };
}

const isUniqueViolation = (err: unknown) => (err as { code?: string } | null)?.code === '23505';

/**
 * A platform's RFC 8707 resources: the registry the protocol reads (cached per platform, dropped on
 * every change here and, from other instances, by the resources_changed NOTIFY) and the changes
 * the admin doors make. A change made in a caller's transaction is seen once the caller calls
 * forget() after its commit.
 */
export function createResources(deps: Deps, notifications?: Notifications) {
  const cache = createTtlCache<readonly Resource[]>(deps.now, {
    ttlMs: coherentTtlMs(notifications, RESOURCE_CACHE_MS),
    ...perPlatformBounds(deps.config),
  });
  function forget(platformId: string) {
    cache.delete(platformId);
  }
  notifications?.subscribe('latchkey_cache', {
    onMessage: (payload) => payload.startsWith('resources:') && forget(payload.slice('resources:'.length)),
    // Notifications may have been missed: start over.
    onListening: () => cache.clear(),
  });

  /** Shared by every caller of the cache: frozen, so that none can change another's copy. */
  const frozen = (list: Resource[]): readonly Resource[] =>
    Object.freeze(
      list.map((r) =>
        Object.freeze({
          ...r,
          scopes: Object.freeze(r.scopes.map((s) => Object.freeze(s))) as ResourceScope[],
          defaultScopes: Object.freeze(r.defaultScopes) as string[],
        }),
      ),
    );

  async function listForPlatform(platformId: string): Promise<readonly Resource[]> {
    if (!isUuid(platformId)) return [];
    return cache.getOrLoad(platformId, async () => frozen(await resources.listByPlatform(deps.db, platformId)));
  }

  /** Runs `work` in the caller's transaction, or in one of its own (the platform lock needs one), then drops the cached list. */
  async function change<T>(
    platformId: string,
    trx: Knex.Transaction | undefined,
    work: (trx: Knex.Transaction) => Promise<T>,
  ): Promise<T> {
    try {
      return trx ? await work(trx) : await deps.db.transaction(work);
    } finally {
      forget(platformId);
    }
  }

  /** The platform, locked; not_found when there is none, 409 when it is a seed platform. */
  async function standardPlatform(trx: Queryable, platformId: string) {
    const platform = isUuid(platformId) ? await resources.lockPlatform(trx, platformId) : undefined;
    if (!platform) throw unknownPlatform(platformId);
    if (platform.signingProfile !== 'standard') throw seedPlatform();
  }

  /** By id, or by URI (a URI has a scheme, so is never a UUID). */
  async function get(platformId: string, idOrUri: string, q: Queryable = deps.db): Promise<Resource> {
    const found = !isUuid(platformId)
      ? undefined
      : isUuid(idOrUri)
        ? await resources.findById(q, platformId, idOrUri)
        : await resources.findByUri(q, platformId, idOrUri);
    if (!found) throw unknownResource(idOrUri);
    return found;
  }

  return {
    forget,
    listForPlatform,

    /** The resource a request names by its indicator (exact string match), from the cached list. */
    async findByUri(platformId: string, uri: string): Promise<Resource | undefined> {
      return (await listForPlatform(platformId)).find((r) => r.uri === uri);
    },

    /** One resource by id or URI, read from the database (not the cache). Throws not_found. */
    get,

    /** The platform's resources read from the database (the admin doors show what is stored this instant). */
    list(platformId: string, q: Queryable = deps.db): Promise<Resource[]> {
      return isUuid(platformId) ? resources.listByPlatform(q, platformId) : Promise.resolve([]);
    },

    /** Throws invalid_request (a rule, naming the field), not_found (platform), 409 (seed platform, URI taken, limit reached). */
    async create(platformId: string, input: ResourceInput, trx?: Knex.Transaction): Promise<Resource> {
      const fields = checkResource(input);
      return change(platformId, trx, async (t) => {
        await standardPlatform(t, platformId);
        if ((await resources.countByPlatform(t, platformId)) >= RESOURCES_PER_PLATFORM_MAX) {
          throw conflict(`a platform has at most ${RESOURCES_PER_PLATFORM_MAX} resources: delete one first`);
        }
        const created = await resources.insertUnlessUriTaken(t, newId(), platformId, fields, deps.now());
        if (!created) throw uriTaken(fields.uri);
        return created;
      });
    },

    /** Any field; the resource as changed passes the rules of creation. Throws like create, and not_found for the resource. */
    async update(platformId: string, idOrUri: string, patch: ResourcePatch, trx?: Knex.Transaction): Promise<Resource> {
      return change(platformId, trx, async (t) => {
        await standardPlatform(t, platformId);
        const current = await get(platformId, idOrUri, t);
        const given = Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined));
        const fields = checkResource({ ...current, ...given });
        if (fields.uri !== current.uri && (await resources.findByUri(t, platformId, fields.uri)))
          throw uriTaken(fields.uri);
        const updated = await resources.update(t, platformId, current.id, fields, deps.now()).catch((err: unknown) => {
          throw isUniqueViolation(err) ? uriTaken(fields.uri) : err;
        });
        if (!updated) throw unknownResource(idOrUri);
        return updated;
      });
    },

    /** Removes a resource; allowed on a seed platform too (one that was standard). Throws not_found. */
    async delete(platformId: string, idOrUri: string, trx?: Knex.Transaction): Promise<Resource> {
      return change(platformId, trx, async (t) => {
        const current = await get(platformId, idOrUri, t);
        if (!(await resources.remove(t, platformId, current.id))) throw unknownResource(idOrUri);
        return current;
      });
    },
  };
}

export type Resources = ReturnType<typeof createResources>;
