import type { Queryable } from '../db';
import type { Address, UserRow } from './user.repository';
import { toUser } from './user.repository';
import { invalidateUsers } from '../db/invalidation';

/** The self-service changes of a user row (the account page, verification, reset). */

export interface ProfileChanges {
  givenName: string;
  middleName: string | null;
  familyName: string;
  nickname: string | null;
  preferredUsername: string;
  phoneNumber: string | null;
  address: Address | null;
}

/** Every profile change bumps updated_at (the `updated_at` claim). */
export async function updateProfile(
  db: Queryable,
  platformId: string,
  userId: string,
  p: ProfileChanges,
  at: Date,
): Promise<UserRow | undefined> {
  const [row] = await db('users')
    .where({ platform_id: platformId, id: userId })
    .update({
      given_name: p.givenName,
      middle_name: p.middleName,
      family_name: p.familyName,
      nickname: p.nickname,
      preferred_username: p.preferredUsername,
      phone_number: p.phoneNumber,
      address: p.address ? JSON.stringify(p.address) : null,
      updated_at: at,
    })
    .returning('*');
  invalidateUsers([userId]); // cached userinfo claims of this process (other instances: NOTIFY)
  return row && toUser(row);
}

export async function updatePictureUrl(
  db: Queryable,
  platformId: string,
  userId: string,
  pictureUrl: string | null,
  at: Date,
): Promise<void> {
  await db('users').where({ platform_id: platformId, id: userId }).update({ picture_url: pictureUrl, updated_at: at });
  invalidateUsers([userId]);
}

/** Sets email_verified only while the address is still the one the link was sent to. */
export async function markEmailVerified(
  db: Queryable,
  platformId: string,
  userId: string,
  emailNormalized: string,
  at: Date,
): Promise<boolean> {
  const n = await db('users')
    .where({ platform_id: platformId, id: userId, email_normalized: emailNormalized })
    .update({ email_verified: true, updated_at: at });
  invalidateUsers([userId]);
  return n > 0;
}

export async function updatePasswordHash(
  db: Queryable,
  platformId: string,
  userId: string,
  passwordHash: string,
): Promise<void> {
  await db('users').where({ platform_id: platformId, id: userId }).update({ password_hash: passwordHash });
}

/** Browser sessions that signed this user in before `at` no longer count as signed in. */
export async function setSessionsValidAfter(
  db: Queryable,
  platformId: string,
  userId: string,
  at: Date,
): Promise<void> {
  await db('users').where({ platform_id: platformId, id: userId }).update({ sessions_valid_after: at });
}

/** For each given user id that still exists: since when its sessions count (null: always). */
export async function findSessionsValidAfter(db: Queryable, userIds: string[]): Promise<Map<string, Date | null>> {
  if (userIds.length === 0) return new Map();
  // A disabled user counts as gone: every browser session of theirs ends.
  const rows = await db('users').whereIn('id', userIds).whereNull('disabled_at').select('id', 'sessions_valid_after');
  return new Map(rows.map((r: { id: string; sessions_valid_after: Date | null }) => [r.id, r.sessions_valid_after]));
}
