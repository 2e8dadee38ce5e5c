import type { Queryable } from '../db';
import type { Passkey } from '../domain/passkey';

const toPasskey = (r: any): Passkey => ({
  id: r.id,
  platformId: r.platform_id,
  userId: r.user_id,
  credentialId: r.credential_id,
  publicKey: r.public_key,
  counter: Number(r.counter),
  transports: r.transports ? String(r.transports).split(',') : [],
  name: r.name,
  isBackupEligible: r.is_backup_eligible,
  isBackedUp: r.is_backed_up,
  aaguid: r.aaguid ?? null,
  createdAt: r.created_at,
  lastUsedAt: r.last_used_at ?? null,
});

export type NewPasskey = Omit<Passkey, 'createdAt' | 'lastUsedAt'>;

/** Inserts unless the credential id is already registered on the platform; false when it is. */
export async function insert(db: Queryable, p: NewPasskey, at: Date): Promise<boolean> {
  const rows = await db('webauthn_credentials')
    .insert({
      id: p.id,
      platform_id: p.platformId,
      user_id: p.userId,
      credential_id: p.credentialId,
      public_key: p.publicKey,
      counter: p.counter,
      transports: p.transports.join(','),
      name: p.name,
      is_backup_eligible: p.isBackupEligible,
      is_backed_up: p.isBackedUp,
      aaguid: p.aaguid,
      created_at: at,
    })
    .onConflict(['platform_id', 'credential_id'])
    .ignore()
    .returning('id');
  return rows.length === 1;
}

export async function listByUser(db: Queryable, platformId: string, userId: string): Promise<Passkey[]> {
  const rows = await db('webauthn_credentials')
    .where({ platform_id: platformId, user_id: userId })
    .orderBy([{ column: 'created_at' }, { column: 'id' }]);
  return rows.map(toPasskey);
}

export async function countByUser(db: Queryable, platformId: string, userId: string): Promise<number> {
  const [{ n }] = await db('webauthn_credentials')
    .where({ platform_id: platformId, user_id: userId })
    .count({ n: '*' });
  return Number(n);
}

/** FOR UPDATE: two sign-ins with one credential update its counter one after the other. */
export async function findByCredentialIdForUpdate(
  db: Queryable,
  platformId: string,
  credentialId: string,
): Promise<Passkey | undefined> {
  const r = await db('webauthn_credentials')
    .where({ platform_id: platformId, credential_id: credentialId })
    .forUpdate()
    .first();
  return r && toPasskey(r);
}

export async function markUsed(
  db: Queryable,
  id: string,
  use: { counter: number; isBackedUp: boolean },
  at: Date,
): Promise<void> {
  await db('webauthn_credentials')
    .where({ id })
    .update({ counter: use.counter, is_backed_up: use.isBackedUp, last_used_at: at });
}

/** Deletes every passkey of this user; how many there were. */
export async function removeAllByUser(db: Queryable, platformId: string, userId: string): Promise<number> {
  return db('webauthn_credentials').where({ platform_id: platformId, user_id: userId }).delete();
}

/** Deletes one passkey of this user; false when there was none with that id. */
export async function remove(db: Queryable, platformId: string, userId: string, id: string): Promise<boolean> {
  return (await db('webauthn_credentials').where({ platform_id: platformId, user_id: userId, id }).delete()) > 0;
}
