import type { Queryable } from '../db';
import type { Operator } from '../domain/operator';

/** An operator with what only the operators service reads: the password hash and the sealed TOTP secret. */
export interface OperatorRow extends Operator {
  passwordHash: string;
  sealedTotpSecret: string | null;
  totpConfirmedAt: Date | null;
}

const toRow = (r: any): OperatorRow => ({
  id: r.id,
  email: r.email,
  platformId: r.platform_id,
  hasTotp: r.totp_confirmed_at !== null && r.sealed_totp_secret !== null,
  createdAt: r.created_at,
  lastSignInAt: r.last_sign_in_at,
  disabledAt: r.disabled_at,
  passwordHash: r.password_hash,
  sealedTotpSecret: r.sealed_totp_secret,
  totpConfirmedAt: r.totp_confirmed_at,
});

/** Inserts an operator; undefined when the email is taken. */
export async function insert(
  db: Queryable,
  o: { id: string; email: string; passwordHash: string; platformId: string | null },
): Promise<OperatorRow | undefined> {
  const [row] = await db('operators')
    .insert({ id: o.id, email: o.email, password_hash: o.passwordHash, platform_id: o.platformId })
    .onConflict('email')
    .ignore()
    .returning('*');
  return row && toRow(row);
}

export async function findById(db: Queryable, id: string): Promise<OperatorRow | undefined> {
  const row = await db('operators').where({ id }).first();
  return row && toRow(row);
}

/** FOR UPDATE: a change of the operator's second factors waits for another one (at least one stays). */
export async function findByIdForUpdate(db: Queryable, id: string): Promise<OperatorRow | undefined> {
  const row = await db('operators').where({ id }).forUpdate().first();
  return row && toRow(row);
}

export async function findByEmail(db: Queryable, email: string): Promise<OperatorRow | undefined> {
  const row = await db('operators').where({ email }).first();
  return row && toRow(row);
}

export async function list(db: Queryable, platformId?: string): Promise<OperatorRow[]> {
  const q = db('operators').orderBy('email');
  if (platformId) q.where({ platform_id: platformId });
  return (await q).map(toRow);
}

export async function disable(db: Queryable, id: string, at: Date): Promise<boolean> {
  return (await db('operators').where({ id }).whereNull('disabled_at').update({ disabled_at: at })) > 0;
}

export async function enable(db: Queryable, id: string): Promise<boolean> {
  return (await db('operators').where({ id }).whereNotNull('disabled_at').update({ disabled_at: null })) > 0;
}

/** A confirmed app in one step (set up on "Your account" from a secret kept in the session, never pending here). */
export async function setConfirmedTotp(
  db: Queryable,
  id: string,
  sealedSecret: string,
  step: number,
  at: Date,
): Promise<boolean> {
  return (
    (await db('operators')
      .where({ id })
      .whereNull('totp_confirmed_at')
      .update({ sealed_totp_secret: sealedSecret, totp_confirmed_at: at, last_totp_step: step })) > 0
  );
}

/** Removes the app, confirmed or pending (its secret is gone: a later enrolment starts afresh). */
export async function clearTotp(db: Queryable, id: string): Promise<void> {
  await db('operators')
    .where({ id })
    .update({ sealed_totp_secret: null, totp_confirmed_at: null, last_totp_step: null });
}

/** Deletes the operator's console sessions (signed in or between password and code) from the session table. */
export async function endConsoleSessions(db: Queryable, id: string): Promise<number> {
  return db('session').whereRaw(`sess->'console'->>'operatorId' = ?`, [id]).delete();
}

/** A new pending secret; refused (false) once one is confirmed, so enrolment cannot replace a working app. */
export async function setPendingTotp(db: Queryable, id: string, sealedSecret: string): Promise<boolean> {
  return (
    (await db('operators')
      .where({ id })
      .whereNull('totp_confirmed_at')
      .update({ sealed_totp_secret: sealedSecret, last_totp_step: null })) > 0
  );
}

/** Confirms the pending secret with the step of its first code, if it is still `sealedSecret` (not replaced by a new start meanwhile). */
export async function confirmTotp(
  db: Queryable,
  id: string,
  sealedSecret: string,
  step: number,
  at: Date,
): Promise<boolean> {
  return (
    (await db('operators')
      .where({ id, sealed_totp_secret: sealedSecret })
      .whereNull('totp_confirmed_at')
      .update({ totp_confirmed_at: at, last_totp_step: step })) > 0
  );
}

/** Records `step` as used unless it (or a later one) already was: no replay, also between instances. */
export async function claimTotpStep(db: Queryable, id: string, step: number): Promise<boolean> {
  const n = await db('operators')
    .where({ id })
    .whereNotNull('totp_confirmed_at')
    .andWhere((q) => q.whereNull('last_totp_step').orWhere('last_totp_step', '<', step))
    .update({ last_totp_step: step });
  return n === 1;
}

export async function markSignedIn(db: Queryable, id: string, at: Date): Promise<void> {
  await db('operators').where({ id }).update({ last_sign_in_at: at });
}
