import type { Queryable } from '../db';

import type { Client } from '../domain/client';

export type { ClientType } from '../domain/client';
/** The stored client is the domain's Client. */
export type ClientRow = Client;

const toClient = (r: any): ClientRow => ({
  id: r.id,
  platformId: r.platform_id,
  name: r.name,
  type: r.type,
  redirectUris: r.redirect_uris,
  postLogoutRedirectUris: r.post_logout_redirect_uris,
  allowedScopes: r.allowed_scopes,
  sealedSecret: r.sealed_secret,
  isResourceServer: r.is_resource_server,
  createdAt: r.created_at,
});

export async function insert(db: Queryable, c: Omit<ClientRow, 'createdAt'>): Promise<ClientRow> {
  const [row] = await db('clients')
    .insert({
      id: c.id,
      platform_id: c.platformId,
      name: c.name,
      type: c.type,
      redirect_uris: c.redirectUris,
      post_logout_redirect_uris: c.postLogoutRedirectUris,
      allowed_scopes: c.allowedScopes,
      sealed_secret: c.sealedSecret,
      is_resource_server: c.isResourceServer,
    })
    .returning('*');
  return toClient(row);
}

export async function findById(db: Queryable, platformId: string, id: string): Promise<ClientRow | undefined> {
  const row = await db('clients').where({ platform_id: platformId, id }).first();
  return row && toClient(row);
}

export async function findFirstByPlatform(db: Queryable, platformId: string): Promise<ClientRow | undefined> {
  const row = await db('clients').where({ platform_id: platformId }).orderBy('created_at').first();
  return row && toClient(row);
}
