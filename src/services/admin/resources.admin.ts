import type { Knex } from 'knex';
import type { z } from 'zod';
import type { AdminActor } from '../../domain/admin';
import type { Resource } from '../../domain/resource';
import type { Deps } from '../deps';
import type { Audit } from '../audit.service';
import type { ResourcePatch, Resources } from '../resources.service';
import type { PlatformsAdmin } from './platforms.admin';
import type { ResourceCreate, ResourceUpdate } from '../../wire/admin/resources.schemas';

type UpdateBody = z.infer<typeof ResourceUpdate>;

/** The wire's snake_case fields as the resources service's input (undefined: not given). */
const toPatch = (body: UpdateBody): ResourcePatch => ({
  uri: body.uri,
  name: body.name,
  scopes: body.scopes?.map((s) => ({ name: s.name, description: s.description ?? '' })),
  defaultScopes: body.default_scopes,
  accessTokenTtlSeconds: body.access_token_ttl_seconds,
});

/** What an operator set, in wire names, for the audit log. */
const settings = (r: Resource) => ({
  uri: r.uri,
  name: r.name,
  scopes: r.scopes.map((s) => s.name),
  default_scopes: r.defaultScopes,
  access_token_ttl_seconds: r.accessTokenTtlSeconds,
});

/** What an update changed, as `{field: {from, to}}`; a changed scope description shows as `scope_descriptions`. */
function changes(before: Resource, after: Resource) {
  const [from, to] = [settings(before), settings(after)];
  const out: Record<string, { from: unknown; to: unknown } | string[]> = {};
  for (const field of Object.keys(to) as Array<keyof typeof to>) {
    if (JSON.stringify(from[field]) !== JSON.stringify(to[field])) out[field] = { from: from[field], to: to[field] };
  }
  const described = after.scopes
    .filter((s) => before.scopes.some((b) => b.name === s.name && b.description !== s.description))
    .map((s) => s.name);
  if (described.length) out.scope_descriptions = described;
  return out;
}

/**
 * A platform's RFC 8707 resources as operators manage them (admin API, CLI, console), over the
 * resources service (its rules). Scope first (another platform is unknown), each change audited in
 * its transaction, and the cached list dropped once the change is committed.
 */
export function createResourcesAdmin(deps: Deps, resources: Resources, platformsAdmin: PlatformsAdmin, audit: Audit) {
  /** Runs the change in a transaction and drops the platform's cached resources after the commit (or the rollback). */
  async function committed<T>(platformId: string, work: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
    try {
      return await deps.db.transaction(work);
    } finally {
      resources.forget(platformId);
    }
  }

  return {
    /** By id or by URI. Throws not_found. */
    async get(actor: AdminActor, platformId: string, idOrUri: string): Promise<Resource> {
      await platformsAdmin.get(actor, platformId);
      return resources.get(platformId, idOrUri);
    },

    /** In the order they were added, read from the database. */
    async list(actor: AdminActor, platformId: string): Promise<Resource[]> {
      await platformsAdmin.get(actor, platformId);
      return resources.list(platformId);
    },

    /** Throws invalid_request naming the field, not_found, 409 (a seed platform, the URI taken, the limit reached). */
    async create(actor: AdminActor, platformId: string, body: z.infer<typeof ResourceCreate>): Promise<Resource> {
      await platformsAdmin.get(actor, platformId);
      const patch = toPatch(body);
      const input = { ...patch, uri: body.uri, name: body.name, scopes: patch.scopes ?? [] };
      return committed(platformId, async (trx) => {
        const created = await resources.create(platformId, input, trx);
        await audit.record(trx, actor, {
          kind: 'resource.created',
          platformId,
          details: { resource_id: created.id, ...settings(created) },
        });
        return created;
      });
    },

    /** Any field; the resource as changed passes the rules of creation. */
    async update(actor: AdminActor, platformId: string, idOrUri: string, body: UpdateBody): Promise<Resource> {
      await platformsAdmin.get(actor, platformId);
      return committed(platformId, async (trx) => {
        const before = await resources.get(platformId, idOrUri, trx);
        const after = await resources.update(platformId, before.id, toPatch(body), trx);
        await audit.record(trx, actor, {
          kind: 'resource.updated',
          platformId,
          details: { resource_id: before.id, resource: after.uri, ...changes(before, after) },
        });
        return after;
      });
    },

    /** Tokens already issued for it stay valid until they expire; new requests naming it are refused. */
    async delete(actor: AdminActor, platformId: string, idOrUri: string): Promise<Resource> {
      await platformsAdmin.get(actor, platformId);
      return committed(platformId, async (trx) => {
        const removed = await resources.delete(platformId, (await resources.get(platformId, idOrUri, trx)).id, trx);
        await audit.record(trx, actor, {
          kind: 'resource.deleted',
          platformId,
          details: { resource_id: removed.id, uri: removed.uri, name: removed.name },
        });
        return removed;
      });
    },
  };
}

export type ResourcesAdmin = ReturnType<typeof createResourcesAdmin>;
