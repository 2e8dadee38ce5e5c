import type { Queryable } from '../db';
import type { MfaPolicy } from '../domain/mfa';

/** A user's TOTP enrolment; `confirmedAt` null while it waits for the first code. */
export interface TotpRow {
  userId: string;
  sealedSecret: string;
  confirmedAt: Date | null;
  lastUsedStep: number | null;
  createdAt: Date;
}

const toTotp = (r: any): TotpRow => ({
  userId: r.user_id,
  sealedSecret: r.sealed_secret,
  confirmedAt: r.confirmed_at,
  lastUsedStep: r.last_used_step === null || r.last_used_step === undefined ? null : Number(r.last_used_step),
  createdAt: r.created_at,
});

export async function findTotp(db: Queryable, userId: string): Promise<TotpRow | undefined> {
  const row = await db('user_totp').where({ user_id: userId }).first();
  return row && toTotp(row);
}

/** A new pending enrolment; replaces a pending one, never a confirmed one. Returns false when one is confirmed. */
export async function upsertPendingTotp(
  db: Queryable,
  userId: string,
  sealedSecret: string,
  now: Date,
): Promise<boolean> {
  const rows = await db('user_totp')
    .insert({ user_id: userId, sealed_secret: sealedSecret, created_at: now })
    .onConflict('user_id')
    .merge({ sealed_secret: sealedSecret, created_at: now, last_used_step: null })
    .where('user_totp.confirmed_at', null)
    .returning('user_id');
  return rows.length === 1;
}

/** Confirms a pending enrolment with the step of its first code. */
export async function confirmTotp(db: Queryable, userId: string, step: number, now: Date): Promise<boolean> {
  const n = await db('user_totp')
    .where({ user_id: userId, confirmed_at: null })
    .update({ confirmed_at: now, last_used_step: step });
  return n === 1;
}

/** Records `step` as used unless it (or a later one) already was: the guard against a replayed code, also between instances. */
export async function claimStep(db: Queryable, userId: string, step: number): Promise<boolean> {
  const n = await db('user_totp')
    .where({ user_id: userId })
    .whereNotNull('confirmed_at')
    .andWhere((q) => q.whereNull('last_used_step').orWhere('last_used_step', '<', step))
    .update({ last_used_step: step });
  return n === 1;
}

export async function deleteTotp(db: Queryable, userId: string): Promise<void> {
  await db('user_totp').where({ user_id: userId }).delete();
}

/** Replaces every code of the user; answers how many of the replaced ones were still unused. */
export async function replaceRecoveryCodes(
  db: Queryable,
  userId: string,
  rows: Array<{ id: string; codeHash: string }>,
  now: Date,
): Promise<number> {
  const replaced: Array<{ used_at: Date | null }> = await db('user_recovery_codes')
    .where({ user_id: userId })
    .delete()
    .returning('used_at');
  if (rows.length)
    await db('user_recovery_codes').insert(
      rows.map((r) => ({ id: r.id, user_id: userId, code_hash: r.codeHash, created_at: now })),
    );
  return replaced.filter((r) => r.used_at === null).length;
}

/** Marks an unused code used; false when there is no such unused code. */
export async function useRecoveryCode(db: Queryable, userId: string, codeHash: string, now: Date): Promise<boolean> {
  const n = await db('user_recovery_codes')
    .where({ user_id: userId, code_hash: codeHash, used_at: null })
    .update({ used_at: now });
  return n === 1;
}

export async function countUnusedRecoveryCodes(db: Queryable, userId: string): Promise<number> {
  const row = await db('user_recovery_codes')
    .where({ user_id: userId, used_at: null })
    .count<{ count: number }[]>('* as count')
    .first();
  return Number(row?.count ?? 0);
}

export async function deleteRecoveryCodes(db: Queryable, userId: string): Promise<void> {
  await db('user_recovery_codes').where({ user_id: userId }).delete();
}

export async function findMfaPolicy(db: Queryable, platformId: string): Promise<MfaPolicy | undefined> {
  return (await db('platforms').where({ id: platformId }).first('mfa_policy'))?.mfa_policy;
}

/** What decides whether a second factor is due, in one round trip: the platform's policy and the user's factors. */
export async function findSecondFactorState(
  db: Queryable,
  platformId: string,
  userId: string,
): Promise<{ policy: string | undefined; totpConfirmed: boolean; passkeys: number }> {
  const { rows } = await db.raw(
    `SELECT (SELECT mfa_policy FROM platforms WHERE id = :platformId) AS policy,
            EXISTS (SELECT 1 FROM user_totp WHERE user_id = :userId AND confirmed_at IS NOT NULL) AS totp_confirmed,
            (SELECT count(*) FROM webauthn_credentials WHERE platform_id = :platformId AND user_id = :userId) AS passkeys`,
    { platformId, userId },
  );
  const r = rows[0];
  return { policy: r.policy ?? undefined, totpConfirmed: Boolean(r.totp_confirmed), passkeys: Number(r.passkeys) };
}

export async function updateMfaPolicy(db: Queryable, platformId: string, policy: MfaPolicy): Promise<boolean> {
  return (await db('platforms').where({ id: platformId }).update({ mfa_policy: policy })) === 1;
}
