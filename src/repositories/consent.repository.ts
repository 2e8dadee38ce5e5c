import type { Queryable } from '../db';

export async function findScopes(db: Queryable, userId: string, clientId: string): Promise<string[]> {
  const row = await db('consents').where({ user_id: userId, client_id: clientId }).first('scopes');
  return row?.scopes ?? [];
}

/** Adds scopes to the remembered grant (a union: consent only grows until revoked). */
export async function upsertScopes(
  db: Queryable,
  c: { platformId: string; userId: string; clientId: string; scopes: string[] },
  at: Date,
) {
  await db('consents')
    .insert({ platform_id: c.platformId, user_id: c.userId, client_id: c.clientId, scopes: c.scopes, updated_at: at })
    .onConflict(['user_id', 'client_id'])
    .merge({
      scopes: db.raw('ARRAY(SELECT DISTINCT unnest(consents.scopes || excluded.scopes))'),
      updated_at: at,
    });
}

export async function remove(db: Queryable, userId: string, clientId: string): Promise<number> {
  return db('consents').where({ user_id: userId, client_id: clientId }).delete();
}

/** Forgets every remembered grant to a client (its identity changed); returns how many. */
export async function removeForClient(db: Queryable, clientId: string): Promise<number> {
  return db('consents').where({ client_id: clientId }).delete();
}

export async function listForUser(db: Queryable, userId: string) {
  return db('consents as c')
    .join('clients as k', 'k.id', 'c.client_id')
    .where({ 'c.user_id': userId })
    .select('c.client_id', 'k.name', 'c.scopes', 'c.updated_at');
}
