import type { z } from 'zod';
import type { Resource as ResourceShape } from '../../wire/admin/resources.schemas';
import type { Resource } from '../../domain/resource';

/** A resource as the admin surfaces show it. */
export function presentResource(r: Resource): z.infer<typeof ResourceShape> {
  return {
    id: r.id,
    platform_guid: r.platformId,
    uri: r.uri,
    name: r.name,
    scopes: r.scopes.map((s) => ({ name: s.name, description: s.description })),
    default_scopes: [...r.defaultScopes],
    access_token_ttl_seconds: r.accessTokenTtlSeconds,
    created_at: r.createdAt.toISOString(),
    updated_at: r.updatedAt.toISOString(),
  };
}
