// preferred_username is always released with `profile` (the spec lets only middle_name and nickname be absent): give every existing user one, then forbid NULL.
import type { Knex } from 'knex';

/**
 * A frozen copy of defaultPreferredUsername (src/services/user-rules.ts) as this migration
 * ships: "given.family", lower case, other characters folded to "-", at most 64 characters.
 * Computed here rather than in SQL so that non-ASCII names fold the same way as at sign-up
 * (a database in the C locale treats only ASCII as letters).
 */
function derive(givenName: string, familyName: string): string {
  const part = (s: string) =>
    s
      .normalize('NFKC')
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}]+/gu, '-')
      .replace(/^-+|-+$/g, '');
  const joined = [part(givenName), part(familyName)].filter(Boolean).join('.');
  const cut = [...joined]
    .slice(0, 64)
    .join('')
    .replace(/[.-]+$/, '')
    .normalize('NFC');
  return /[\p{L}\p{N}]/u.test(cut) ? cut : 'user';
}

const BATCH = 1000;

export async function up(knex: Knex): Promise<void> {
  for (;;) {
    const rows: { id: string; given_name: string; family_name: string }[] = await knex('users')
      .whereNull('preferred_username')
      .select('id', 'given_name', 'family_name')
      .orderBy('id')
      .limit(BATCH);
    if (rows.length === 0) break;
    // updated_at moves: the claim appears, and relying parties refresh cached claims by it.
    await knex.raw(
      `UPDATE users SET preferred_username = v.username, updated_at = now()
         FROM (VALUES ${rows.map(() => '(CAST(? AS uuid), CAST(? AS text))').join(', ')}) AS v(id, username)
        WHERE users.id = v.id`,
      rows.flatMap((r) => [r.id, derive(r.given_name, r.family_name)]),
    );
  }
  await knex.raw('ALTER TABLE users ALTER COLUMN preferred_username SET NOT NULL');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE users ALTER COLUMN preferred_username DROP NOT NULL');
}
