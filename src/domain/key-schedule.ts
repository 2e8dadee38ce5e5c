/**
 * Where a signing key is in its life at a given time, from what is stored: the
 * one rule the signer, the JWKS, the verifier and the admin list share.
 *
 * - next: published (JWKS) and verifying, not signing yet: an asymmetric rotation's new key until
 *   its `activatesAt`.
 * - active: signs new tokens. A next key is active from `activatesAt` on, before any write says so:
 *   every instance decides by the same stored time, without a job.
 * - retiring: stopped signing (a rotation replaced it, or the next key's activation did) and
 *   still verifies — and stays published — until the tokens it signed have expired.
 * - retired: verifies nothing (grace over, or withdrawn by an operator).
 */
export type KeyState = 'next' | 'active' | 'retiring' | 'retired';

export interface StoredKeyLife {
  status: 'active' | 'next' | 'retired';
  createdAt: Date;
  activatesAt: Date | null;
  retiredAt: Date | null;
  withdrawnAt: Date | null;
}

export interface KeyLife {
  state: KeyState;
  /** When it starts (next) or started signing, if it went through publication; else null. */
  activatesAt: Date | null;
  /** When it stopped signing; null while next or active. */
  rotatedAt: Date | null;
  /** When it stops (retiring) or stopped (retired) verifying; null while next or active. */
  retiredAt: Date | null;
}

/**
 * `supersededAt`: for a stored-active key, the activation time of its algorithm's next key when
 * that time has come (see dueActivation); the key then counts as rotated out from that moment.
 */
export function keyLifeAt(
  key: StoredKeyLife,
  supersededAt: Date | undefined,
  now: Date,
  accessTokenTtlSeconds: number,
): KeyLife {
  const activatesAt = key.activatesAt;
  if (key.status === 'next' && activatesAt && activatesAt > now)
    return { state: 'next', activatesAt, rotatedAt: null, retiredAt: null };
  if (key.status === 'next' || (key.status === 'active' && !supersededAt))
    return { state: 'active', activatesAt, rotatedAt: null, retiredAt: null };
  const rotatedAt = key.status === 'active' ? supersededAt! : (key.retiredAt ?? key.createdAt);
  const graceEnds = new Date(rotatedAt.getTime() + accessTokenTtlSeconds * 1000);
  const state = !key.withdrawnAt && graceEnds > now ? 'retiring' : 'retired';
  return { state, activatesAt, rotatedAt, retiredAt: key.withdrawnAt ?? graceEnds };
}

/** The activation time of a stored-next key of `alg` that has come (at most one per alg), which supersedes the stored-active one. */
export function dueActivation<K extends { alg: string; status: StoredKeyLife['status']; activatesAt: Date | null }>(
  keys: readonly K[],
  alg: string,
  now: Date,
): Date | undefined {
  const next = keys.find((k) => k.alg === alg && k.status === 'next');
  return next?.activatesAt && next.activatesAt <= now ? next.activatesAt : undefined;
}
