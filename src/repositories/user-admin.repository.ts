import type { Queryable } from '../db';
import type { Address } from '../domain/user';
import { invalidateUsers } from '../db/invalidation';
import { normalizeEmail, toUser, type UserRow } from './user.repository';

/** The operator's reads and changes of users (admin API, CLI, console). */

const escapeLike = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);

/**
 * The list's order: creation time to the millisecond (what a cursor carries), then id. Taken in UTC
 * so that the expression is immutable and the index users_platform_created_ms_id_index serves it
 * (docs/decisions.md, "Admin lists stay fast on a large platform"): a page reads its rows in order
 * instead of sorting the platform's users.
 */
const CREATED_MS = `date_trunc('milliseconds', created_at AT TIME ZONE 'UTC')`;

/** Oldest first, keyset-paged; `email` matches anywhere in the normalized address. */
export async function listPage(
  db: Queryable,
  platformId: string,
  p: { email?: string; after?: { at: string; id: string }; limit: number },
): Promise<UserRow[]> {
  const q = db('users').where({ platform_id: platformId });
  if (p.email) q.whereRaw(`email_normalized LIKE ? ESCAPE '\\'`, [`%${escapeLike(normalizeEmail(p.email))}%`]);
  if (p.after) q.whereRaw(`(${CREATED_MS}, id) > ((?::timestamptz AT TIME ZONE 'UTC'), ?)`, [p.after.at, p.after.id]);
  const rows = await q.orderByRaw(`${CREATED_MS}, id`).limit(p.limit);
  return rows.map(toUser);
}

/** The columns an operator may set (already validated); keys absent are left alone. */
export interface UserChanges {
  email?: string;
  emailVerified?: boolean;
  givenName?: string;
  familyName?: string;
  middleName?: string | null;
  nickname?: string | null;
  preferredUsername?: string;
  birthdate?: string | null;
  phoneNumber?: string | null;
  address?: Address | null;
}

const COLUMNS: Record<keyof UserChanges, string> = {
  email: 'email',
  emailVerified: 'email_verified',
  givenName: 'given_name',
  familyName: 'family_name',
  middleName: 'middle_name',
  nickname: 'nickname',
  preferredUsername: 'preferred_username',
  birthdate: 'birthdate',
  phoneNumber: 'phone_number',
  address: 'address',
};

/** Updates the given fields and updated_at; undefined when the new email is taken on the platform (unique index). */
export async function update(
  db: Queryable,
  platformId: string,
  id: string,
  c: UserChanges,
  at: Date,
): Promise<UserRow | 'email_taken' | undefined> {
  const set: Record<string, unknown> = { updated_at: at };
  for (const [key, column] of Object.entries(COLUMNS) as [keyof UserChanges, string][]) {
    if (c[key] === undefined) continue;
    set[column] = key === 'address' && c.address ? JSON.stringify(c.address) : c[key];
  }
  if (c.email !== undefined) {
    set.email_normalized = normalizeEmail(c.email);
    const taken = await db('users')
      .where({ platform_id: platformId, email_normalized: set.email_normalized })
      .whereNot({ id })
      .first('id');
    if (taken) return 'email_taken';
  }
  let row;
  try {
    [row] = await db('users').where({ platform_id: platformId, id }).update(set).returning('*');
  } catch (err) {
    if ((err as { code?: string }).code === '23505') return 'email_taken'; // taken by a concurrent change since the check
    throw err;
  }
  invalidateUsers([id]);
  return row && toUser(row);
}

/** Disables (a time) or enables (null) the user. */
export async function setDisabledAt(db: Queryable, platformId: string, id: string, at: Date | null): Promise<void> {
  await db('users').where({ platform_id: platformId, id }).update({ disabled_at: at });
  invalidateUsers([id]);
}

/** Codes not yet exchanged cannot be redeemed after a disable. */
export async function deleteUnusedCodes(db: Queryable, userId: string): Promise<number> {
  return db('authorization_codes').where({ user_id: userId }).whereNull('consumed_at').delete();
}

/**
 * Deletes the user; every row they own goes with it by the foreign keys' ON DELETE CASCADE (codes,
 * refresh families and tokens, access tokens, consents, TOTP, recovery codes, passkeys, account
 * tokens, picture). Returns whether a row was deleted.
 */
export async function remove(db: Queryable, platformId: string, id: string): Promise<boolean> {
  const n = await db('users').where({ platform_id: platformId, id }).delete();
  invalidateUsers([id]);
  return n > 0;
}

/** Mails to the address on the platform (queued or sent): they hold the user's name and address. */
export async function deleteMailTo(db: Queryable, platformId: string, email: string): Promise<number> {
  return db('mail_outbox')
    .where({ platform_id: platformId })
    .whereRaw('lower(recipient) = ?', [normalizeEmail(email)])
    .delete();
}

/** A live refresh-token family: one app's standing grant, from one sign-in. */
export interface GrantSession {
  id: string;
  clientId: string;
  clientName: string;
  scope: string;
  authTime: Date;
  createdAt: Date;
  lastUsedAt: Date;
}

/** The user's unrevoked families with an unexpired token, newest first. */
export async function listSessions(db: Queryable, userId: string, now: Date): Promise<GrantSession[]> {
  const rows = await db('refresh_token_families as f')
    .join('clients as c', 'c.id', 'f.client_id')
    .join('refresh_tokens as t', 't.family_id', 'f.id')
    .where({ 'f.user_id': userId })
    .whereNull('f.revoked_at')
    .groupBy('f.id', 'c.name')
    .havingRaw('max(t.expires_at) > ?', [now])
    .select(
      'f.id',
      'f.client_id',
      'c.name as client_name',
      'f.scope',
      'f.auth_time',
      'f.created_at',
      db.raw('max(t.created_at) as last_used_at'),
    )
    .orderBy([
      { column: 'f.created_at', order: 'desc' },
      { column: 'f.id', order: 'desc' },
    ]);
  return rows.map((r: any) => ({
    id: r.id,
    clientId: r.client_id,
    clientName: r.client_name,
    scope: r.scope,
    authTime: r.auth_time,
    createdAt: r.created_at,
    lastUsedAt: new Date(r.last_used_at),
  }));
}

/** Whether the family is the user's and still live (not revoked). */
export async function findLiveFamily(
  db: Queryable,
  userId: string,
  familyId: string,
): Promise<{ clientId: string } | undefined> {
  const row = await db('refresh_token_families')
    .where({ id: familyId, user_id: userId })
    .whereNull('revoked_at')
    .first('client_id');
  return row && { clientId: row.client_id };
}

/** Whether the user has a confirmed authenticator app, unused recovery codes, passkeys. */
export async function mfaStatus(
  db: Queryable,
  platformId: string,
  userId: string,
): Promise<{ totp: boolean; recoveryCodes: number; passkeys: number }> {
  const totp = await db('user_totp').where({ user_id: userId }).whereNotNull('confirmed_at').first('user_id');
  const [{ n: codes }] = await db('user_recovery_codes')
    .where({ user_id: userId })
    .whereNull('used_at')
    .count({ n: '*' });
  const [{ n: passkeys }] = await db('webauthn_credentials')
    .where({ platform_id: platformId, user_id: userId })
    .count({ n: '*' });
  return { totp: Boolean(totp), recoveryCodes: Number(codes), passkeys: Number(passkeys) };
}
