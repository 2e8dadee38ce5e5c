import type { Queryable } from '../db';
import { reviveTimestamps } from './json-row';
import { normalizeEmail, type User } from '../domain/user';

export type { Address } from '../domain/user';
export { normalizeEmail } from '../domain/user';

/** The stored user: the domain's User and the password hash, which stays in the repositories and the credential checks. */
export interface UserRow extends User {
  /** null: no password; the user signs in through an upstream provider or a passkey. */
  passwordHash: string | null;
  /** Set by an operator (admin user disable): no sign-in, no token accepted. */
  disabledAt: Date | null;
}

export const toUser = (r: any): UserRow => ({
  id: r.id,
  platformId: r.platform_id,
  email: r.email,
  emailVerified: r.email_verified,
  passwordHash: r.password_hash,
  givenName: r.given_name,
  familyName: r.family_name,
  middleName: r.middle_name,
  nickname: r.nickname,
  preferredUsername: r.preferred_username,
  birthdate: r.birthdate,
  phoneNumber: r.phone_number,
  address: r.address,
  pictureUrl: r.picture_url,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
  disabledAt: r.disabled_at ?? null,
});

/** A user row selected as row_to_json(users.*). */
export const userFromJson = (json: Record<string, unknown>): UserRow =>
  toUser(reviveTimestamps(json, ['created_at', 'updated_at', 'disabled_at']));

export type NewUser = Omit<
  UserRow,
  'createdAt' | 'updatedAt' | 'disabledAt' | 'middleName' | 'nickname' | 'address' | 'pictureUrl'
> &
  Partial<Pick<UserRow, 'middleName' | 'nickname' | 'address' | 'pictureUrl'>>;

/** Inserts unless the email is taken on the platform; undefined when it is. */
export async function insertUnlessEmailTaken(db: Queryable, u: NewUser): Promise<UserRow | undefined> {
  const [row] = await db('users')
    .insert({
      id: u.id,
      platform_id: u.platformId,
      email: u.email.trim(),
      email_normalized: normalizeEmail(u.email),
      email_verified: u.emailVerified,
      password_hash: u.passwordHash,
      given_name: u.givenName,
      family_name: u.familyName,
      middle_name: u.middleName ?? null,
      nickname: u.nickname ?? null,
      preferred_username: u.preferredUsername,
      birthdate: u.birthdate,
      phone_number: u.phoneNumber,
      address: u.address ? JSON.stringify(u.address) : null,
      picture_url: u.pictureUrl ?? null,
    })
    .onConflict(['platform_id', 'email_normalized'])
    .ignore()
    .returning('*');
  return row && toUser(row);
}

export async function findById(db: Queryable, platformId: string, id: string): Promise<UserRow | undefined> {
  const row = await db('users').where({ platform_id: platformId, id }).first();
  return row && toUser(row);
}

export async function findByEmail(db: Queryable, platformId: string, email: string): Promise<UserRow | undefined> {
  const row = await db('users')
    .where({ platform_id: platformId, email_normalized: normalizeEmail(email) })
    .first();
  return row && toUser(row);
}

export async function findManyByIds(db: Queryable, platformId: string, ids: string[]): Promise<UserRow[]> {
  if (ids.length === 0) return [];
  const rows = await db('users').where({ platform_id: platformId }).whereIn('id', ids);
  return rows.map(toUser);
}
