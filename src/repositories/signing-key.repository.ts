import type { Queryable } from '../db';
import type { AsymmetricAlg, SigningAlg } from '../domain/signing-key';

export interface SigningKeyRow {
  kid: string;
  platformId: string;
  alg: SigningAlg;
  /** HS512 keys: the sealed key octets; null for asymmetric keys. */
  sealedSecret: string | null;
  /** Asymmetric keys: the private JWK, sealed; the public JWK in clear. Null for HS512 keys. */
  sealedPrivateJwk: string | null;
  publicJwk: Record<string, string> | null;
  /** next: published, signing from activatesAt (asymmetric rotations; see domain/key-schedule). */
  status: 'active' | 'next' | 'retired';
  createdAt: Date;
  /** A key that went through publication: when it starts (or started) signing. */
  activatesAt: Date | null;
  /** Rotated out: no longer signs (it still verifies until its tokens expire, unless withdrawn). */
  retiredAt: Date | null;
  /** Retired by an operator ahead of that: verifies nothing from then. */
  withdrawnAt: Date | null;
}

const toKey = (r: any): SigningKeyRow => ({
  kid: r.kid,
  platformId: r.platform_id,
  alg: r.alg ?? 'HS512',
  sealedSecret: r.sealed_secret,
  sealedPrivateJwk: r.sealed_private_jwk ?? null,
  publicJwk: typeof r.public_jwk === 'string' ? JSON.parse(r.public_jwk) : (r.public_jwk ?? null),
  status: r.status,
  createdAt: r.created_at,
  activatesAt: r.activates_at ?? null,
  retiredAt: r.retired_at,
  withdrawnAt: r.withdrawn_at ?? null,
});

/**
 * Keys of `alg` (HS512 unless given) that may still verify: the active and next ones and those
 * retired after `retiredAfter`. Active first. (Whether a next key has taken over is the reader's
 * call, by its activates_at: domain/key-schedule.)
 */
export async function listUsable(
  db: Queryable,
  platformId: string,
  retiredAfter: Date,
  algs: readonly SigningAlg[] = ['HS512'],
): Promise<SigningKeyRow[]> {
  const rows = await db('signing_keys')
    .where({ platform_id: platformId })
    .whereIn('alg', algs as SigningAlg[])
    .andWhere((q) =>
      q
        .whereIn('status', ['active', 'next'])
        .orWhere((r) => r.where('retired_at', '>', retiredAfter).whereNull('withdrawn_at')),
    )
    .orderByRaw(`status = 'active' DESC, created_at DESC`);
  return rows.map(toKey);
}

export async function retireActive(
  db: Queryable,
  platformId: string,
  at: Date,
  alg: SigningAlg = 'HS512',
): Promise<void> {
  await db('signing_keys')
    .where({ platform_id: platformId, status: 'active', alg })
    .update({ status: 'retired', retired_at: at });
}

export async function insertActive(
  db: Queryable,
  k: { kid: string; platformId: string; sealedSecret: string },
): Promise<void> {
  await db('signing_keys').insert({
    kid: k.kid,
    platform_id: k.platformId,
    sealed_secret: k.sealedSecret,
    status: 'active',
  });
}

/**
 * A standard platform's key: active at once, or — with `activatesAt` — a rotation's next key,
 * published at once and signing from then.
 */
export async function insertAsymmetric(
  db: Queryable,
  k: {
    kid: string;
    platformId: string;
    alg: AsymmetricAlg;
    sealedPrivateJwk: string;
    publicJwk: Record<string, string>;
    activatesAt?: Date;
  },
): Promise<void> {
  await db('signing_keys').insert({
    kid: k.kid,
    platform_id: k.platformId,
    alg: k.alg,
    sealed_private_jwk: k.sealedPrivateJwk,
    public_jwk: JSON.stringify(k.publicJwk),
    status: k.activatesAt ? 'next' : 'active',
    ...(k.activatesAt ? { activates_at: k.activatesAt } : {}),
  });
}

/** The platform's next keys (at most one per alg). */
export async function listNext(db: Queryable, platformId: string): Promise<SigningKeyRow[]> {
  return (await db('signing_keys').where({ platform_id: platformId, status: 'next' })).map(toKey);
}

/**
 * Writes down a next key's activation once its time has come: the active key of its alg retires
 * as of that time, the next one becomes active. Returns whether anything changed.
 */
export async function activateDueNext(db: Queryable, platformId: string, alg: SigningAlg, now: Date): Promise<boolean> {
  const next = await db('signing_keys')
    .where({ platform_id: platformId, status: 'next', alg })
    .where('activates_at', '<=', now)
    .first();
  if (!next) return false;
  // In this order: one active key per platform and alg (signing_keys_one_active).
  await db('signing_keys')
    .where({ platform_id: platformId, status: 'active', alg })
    .update({ status: 'retired', retired_at: next.activates_at });
  await db('signing_keys').where({ kid: next.kid, status: 'next' }).update({ status: 'active' });
  return true;
}

/** Drops a next key that has not started signing (a new rotation replaces it, or an operator cancels it): it verifies nothing. */
export async function withdrawNext(
  db: Queryable,
  platformId: string,
  alg: SigningAlg,
  at: Date,
): Promise<string | undefined> {
  const rows: { kid: string }[] = await db('signing_keys')
    .where({ platform_id: platformId, status: 'next', alg })
    .update({ status: 'retired', retired_at: at, withdrawn_at: at })
    .returning('kid');
  return rows[0]?.kid;
}

/** An asymmetric key's sealed private JWK, by kid (read when the key first signs). */
export async function findSealedPrivateJwk(db: Queryable, kid: string): Promise<string | undefined> {
  const row = await db('signing_keys').where({ kid }).first('sealed_private_jwk');
  return row?.sealed_private_jwk ?? undefined;
}

export async function findPlatformIdByKid(db: Queryable, kid: string): Promise<string | undefined> {
  const row = await db('signing_keys').where({ kid }).first('platform_id');
  return row?.platform_id;
}

/** Every key of a platform, newest first (keyset on created_at, kid; milliseconds as the cursor carries them). */
export async function listPage(
  db: Queryable,
  platformId: string,
  opts: { before?: { at: string; id: string }; limit: number },
): Promise<SigningKeyRow[]> {
  const q = db('signing_keys')
    .where({ platform_id: platformId })
    .orderByRaw("date_trunc('milliseconds', created_at) DESC, kid DESC")
    .limit(opts.limit);
  if (opts.before)
    q.whereRaw("(date_trunc('milliseconds', created_at), kid) < (?::timestamptz, ?)", [opts.before.at, opts.before.id]);
  return (await q).map(toKey);
}

export async function findByKid(db: Queryable, platformId: string, kid: string): Promise<SigningKeyRow | undefined> {
  const row = await db('signing_keys').where({ platform_id: platformId, kid }).first();
  return row ? toKey(row) : undefined;
}

/** Ends a rotated-out key's grace: it verifies nothing from `at`. Only a retired, not yet withdrawn key changes. */
export async function withdraw(db: Queryable, platformId: string, kid: string, at: Date): Promise<boolean> {
  const n = await db('signing_keys')
    .where({ platform_id: platformId, kid, status: 'retired' })
    .whereNull('withdrawn_at')
    .update({ withdrawn_at: at });
  return n > 0;
}

export async function findActive(
  db: Queryable,
  platformId: string,
  alg: SigningAlg = 'HS512',
): Promise<SigningKeyRow | undefined> {
  const row = await db('signing_keys').where({ platform_id: platformId, status: 'active', alg }).first();
  return row ? toKey(row) : undefined;
}
