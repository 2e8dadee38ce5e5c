import type { Queryable } from '../db';
import type { OperatorPasskey } from '../domain/operator';

const toPasskey = (r: any): OperatorPasskey => ({
  id: r.id,
  operatorId: r.operator_id,
  credentialId: r.credential_id,
  publicKey: r.public_key,
  counter: Number(r.counter),
  transports: r.transports ? String(r.transports).split(',') : [],
  name: r.name,
  createdAt: r.created_at,
  lastUsedAt: r.last_used_at ?? null,
});

export type NewOperatorPasskey = Omit<OperatorPasskey, 'createdAt' | 'lastUsedAt'>;

/** Inserts unless the credential id is already registered; false when it is. */
export async function insert(db: Queryable, p: NewOperatorPasskey, at: Date): Promise<boolean> {
  const rows = await db('operator_webauthn_credentials')
    .insert({
      id: p.id,
      operator_id: p.operatorId,
      credential_id: p.credentialId,
      public_key: p.publicKey,
      counter: p.counter,
      transports: p.transports.join(','),
      name: p.name,
      created_at: at,
    })
    .onConflict('credential_id')
    .ignore()
    .returning('id');
  return rows.length === 1;
}

export async function listByOperator(db: Queryable, operatorId: string): Promise<OperatorPasskey[]> {
  const rows = await db('operator_webauthn_credentials')
    .where({ operator_id: operatorId })
    .orderBy([{ column: 'created_at' }, { column: 'id' }]);
  return rows.map(toPasskey);
}

export async function countByOperator(db: Queryable, operatorId: string): Promise<number> {
  const [{ n }] = await db('operator_webauthn_credentials').where({ operator_id: operatorId }).count({ n: '*' });
  return Number(n);
}

/** FOR UPDATE: two sign-ins with one credential update its counter one after the other. */
export async function findByCredentialIdForUpdate(
  db: Queryable,
  credentialId: string,
): Promise<OperatorPasskey | undefined> {
  const r = await db('operator_webauthn_credentials').where({ credential_id: credentialId }).forUpdate().first();
  return r && toPasskey(r);
}

export async function markUsed(db: Queryable, id: string, counter: number, at: Date): Promise<void> {
  await db('operator_webauthn_credentials').where({ id }).update({ counter, last_used_at: at });
}

export async function remove(db: Queryable, operatorId: string, id: string): Promise<boolean> {
  return (await db('operator_webauthn_credentials').where({ id, operator_id: operatorId }).delete()) > 0;
}

/** All of the operator's passkeys (a lost device: `admin operator reset-mfa`); how many there were. */
export async function removeAll(db: Queryable, operatorId: string): Promise<number> {
  return db('operator_webauthn_credentials').where({ operator_id: operatorId }).delete();
}
