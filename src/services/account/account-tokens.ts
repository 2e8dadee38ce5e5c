import { digest } from '../../crypto/digest';
import { newId, randomToken } from '../../crypto/random';
import type { Queryable } from '../../db';
import * as accountTokens from '../../repositories/account-token.repository';
import type { AccountTokenPurpose, AccountTokenRow } from '../../repositories/account-token.repository';
import type { User } from '../../domain/user';

/** What a mailed link turned out to be when opened. */
export type LinkStatus = 'valid' | 'invalid' | 'used' | 'expired';

export interface Throttle {
  /** Minimum seconds between two links of one purpose for one user. */
  intervalSeconds: number;
  /** At most this many per hour. */
  perHour: number;
}

/** Seconds until another link may be sent; 0 when one may be sent now. */
export async function throttleWait(
  db: Queryable,
  userId: string,
  purpose: AccountTokenPurpose,
  t: Throttle,
  now: Date,
): Promise<number> {
  const recent = await accountTokens.recentCreationTimes(db, userId, purpose, new Date(now.getTime() - 3600_000));
  if (recent.length === 0) return 0;
  const sinceLast = (now.getTime() - recent[0].getTime()) / 1000;
  if (sinceLast < t.intervalSeconds) return Math.ceil(t.intervalSeconds - sinceLast);
  if (recent.length >= t.perHour)
    return Math.ceil((recent[recent.length - 1].getTime() + 3600_000 - now.getTime()) / 1000);
  return 0;
}

/** A new single-use link secret (256 bits); only its SHA-256 is stored. */
export async function issueAccountToken(
  db: Queryable,
  user: User,
  purpose: AccountTokenPurpose,
  ttlSeconds: number,
  now: Date,
): Promise<string> {
  const token = randomToken(32);
  await accountTokens.insert(db, digest(token), {
    id: newId(),
    platformId: user.platformId,
    userId: user.id,
    purpose,
    email: user.email,
    expiresAt: new Date(now.getTime() + ttlSeconds * 1000),
    createdAt: now,
  });
  return token;
}

/** Looks a link up without using it. */
export async function inspectAccountToken(
  db: Queryable,
  platformId: string,
  purpose: AccountTokenPurpose,
  token: string,
  now: Date,
): Promise<{ status: LinkStatus; row?: AccountTokenRow }> {
  if (!/^[A-Za-z0-9_-]{43}$/.test(token)) return { status: 'invalid' };
  const row = await accountTokens.findByHash(db, platformId, purpose, digest(token));
  if (!row) return { status: 'invalid' };
  if (row.consumedAt) return { status: 'used', row };
  if (row.expiresAt <= now) return { status: 'expired', row };
  return { status: 'valid', row };
}
