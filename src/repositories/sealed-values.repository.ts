import type { Queryable } from '../db';

/**
 * Every column holding a value sealed under MASTER_KEY, with its table's key column. A new
 * sealed column is added here, so that rotation (`admin master-key reseal`) reseals it too.
 */
export const SEALED_COLUMNS: ReadonlyArray<{ table: string; key: string; column: string }> = [
  { table: 'clients', key: 'id', column: 'sealed_secret' },
  { table: 'clients', key: 'id', column: 'previous_sealed_secret' }, // null unless a rotation's overlap is running
  { table: 'signing_keys', key: 'kid', column: 'sealed_secret' }, // HS512 keys
  { table: 'signing_keys', key: 'kid', column: 'sealed_private_jwk' }, // RS256/ES256/EdDSA keys of standard platforms
  { table: 'mail_outbox', key: 'id', column: 'sealed_body' }, // null once sent
  { table: 'user_totp', key: 'user_id', column: 'sealed_secret' },
  { table: 'operators', key: 'id', column: 'sealed_totp_secret' },
  { table: 'upstream_providers', key: 'id', column: 'sealed_client_secret' },
  { table: 'user_identities', key: 'id', column: 'sealed_tokens' }, // only for providers that keep the upstream's tokens
];

const SENTINEL_ID = 1;

export async function findSentinel(db: Queryable): Promise<string | undefined> {
  return (await db('master_key_sentinel').where({ id: SENTINEL_ID }).first('sealed'))?.sealed;
}

/** Writes the first sentinel; a concurrent first start keeps whichever came first. */
export async function insertSentinelIfMissing(db: Queryable, sealed: string): Promise<void> {
  await db('master_key_sentinel').insert({ id: SENTINEL_ID, sealed }).onConflict('id').ignore();
}

export async function updateSentinel(db: Queryable, sealed: string, now: Date): Promise<void> {
  await db('master_key_sentinel').where({ id: SENTINEL_ID }).update({ sealed, sealed_at: now });
}

/** Any one sealed value, to check a key against a database sealed before the sentinel existed. */
export async function findAnySealed(db: Queryable): Promise<string | undefined> {
  for (const c of SEALED_COLUMNS) {
    const row = await db(c.table).whereNotNull(c.column).first({ sealed: c.column });
    if (row) return row.sealed;
  }
  return undefined;
}

/** The sealed values of one column, locked for resealing. */
export async function findSealedForUpdate(
  db: Queryable,
  c: { table: string; key: string; column: string },
): Promise<Array<{ key: string; sealed: string }>> {
  const rows = await db(c.table).whereNotNull(c.column).select({ key: c.key, sealed: c.column }).forUpdate();
  return rows.map((r: { key: unknown; sealed: string }) => ({ key: String(r.key), sealed: r.sealed }));
}

export async function updateSealed(
  db: Queryable,
  c: { table: string; key: string; column: string },
  key: string,
  sealed: string,
): Promise<void> {
  await db(c.table)
    .where(c.key, key)
    .update({ [c.column]: sealed });
}
