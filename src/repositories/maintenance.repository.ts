import type { Queryable } from '../db';

/** Deletes rows whose lifetime is over; each statement is idempotent, so instances may race. */
export async function deleteExpired(db: Queryable, now: Date, keepRevokedFor: Date) {
  const codes = await db('authorization_codes').where('expires_at', '<', keepRevokedFor).delete();
  const accessTokens = await db('access_tokens').where('expires_at', '<', now).delete();
  const refreshTokens = await db('refresh_tokens').where('expires_at', '<', now).delete();
  // A family with no live token left is over; revoked ones are kept a while for reuse detection.
  const families = await db('refresh_token_families')
    .whereNotExists(db('refresh_tokens').whereRaw('refresh_tokens.family_id = refresh_token_families.id'))
    .whereNotExists(db('access_tokens').whereRaw('access_tokens.family_id = refresh_token_families.id'))
    .andWhere('created_at', '<', keepRevokedFor)
    .delete();
  const sessions = await db('session').where('expire', '<', now).delete();
  const counters = await db('rate_limit_counters').where('expires_at', '<', now).delete();
  return { codes, accessTokens, refreshTokens, families, sessions, counters };
}
