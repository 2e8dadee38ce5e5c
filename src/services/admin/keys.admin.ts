import type { AdminActor } from '../../domain/admin';
import { OAuthError } from '../../errors';
import * as keys from '../../repositories/signing-key.repository';
import type { SigningKeyRow } from '../../repositories/signing-key.repository';
import type { Deps } from '../deps';
import type { Audit } from '../audit.service';
import type { SigningKeys } from '../signing-keys.service';
import { conflict } from './access';
import { decodeCursor, toPage } from './cursor';
import { isAsymmetricAlg, type SigningAlg } from '../../domain/signing-key';
import type { PlatformsAdmin } from './platforms.admin';

export type KeyStatus = 'active' | 'retiring' | 'retired';

/** A signing key as operators see it (never its material). */
export interface AdminSigningKey {
  kid: string;
  alg: SigningAlg;
  status: KeyStatus;
  createdAt: Date;
  /** When a rotation replaced it; null while active. */
  rotatedAt: Date | null;
  /** When it stops (retiring) or stopped (retired) verifying; null while active. */
  retiredAt: Date | null;
}

/**
 * A platform's signing keys (DESIGN §5, §14): list, rotate, retire; audited in the change's
 * transaction. Retiring ends a rotated-out key's grace at once: the tokens it signed stop
 * verifying and the JWKS stops listing it, here at once (forget) and on other instances through
 * the signing_keys trigger's NOTIFY.
 */
export function createKeysAdmin(deps: Deps, platforms: PlatformsAdmin, signingKeys: SigningKeys, audit: Audit) {
  /** The same rule as the verifier (signing-key.repository listUsable): rotated out, verifying until its tokens expire unless withdrawn. */
  function describe(row: SigningKeyRow): AdminSigningKey {
    const base = { kid: row.kid, alg: row.alg, createdAt: row.createdAt };
    if (row.status === 'active') return { ...base, status: 'active', rotatedAt: null, retiredAt: null };
    const rotatedAt = row.retiredAt ?? row.createdAt;
    const graceEnds = new Date(rotatedAt.getTime() + deps.config.accessTokenTtlSeconds * 1000);
    const retiredAt = row.withdrawnAt ?? graceEnds;
    const status = !row.withdrawnAt && graceEnds > deps.now() ? 'retiring' : 'retired';
    return { ...base, status, rotatedAt, retiredAt };
  }

  const unknownKey = (kid: string) => new OAuthError('not_found', `unknown signing key "${kid}"`);

  return {
    /** Newest first. */
    async list(actor: AdminActor, platformId: string, page: { limit: number; cursor?: string }) {
      await platforms.get(actor, platformId);
      const rows = await keys.listPage(deps.db, platformId, { before: decodeCursor(page.cursor), limit: page.limit + 1 });
      const { items, nextCursor } = toPage(rows, page.limit, (k) => ({ at: k.createdAt, id: k.kid }));
      return { items: items.map(describe), nextCursor };
    },

    async get(actor: AdminActor, platformId: string, kid: string): Promise<AdminSigningKey> {
      await platforms.get(actor, platformId);
      const row = await keys.findByKid(deps.db, platformId, kid);
      if (!row) throw unknownKey(kid);
      return describe(row);
    },

    /**
     * A new active key of `alg` (HS512 unless given); the one it replaces keeps verifying its tokens
     * until they expire (retiring) and, for an asymmetric alg, stays in the JWKS as long. RS256, ES256
     * and EdDSA keys belong to standard platforms only (409 on a seed platform).
     */
    async rotate(actor: AdminActor, platformId: string, alg: SigningAlg = 'HS512'): Promise<{ kid: string; previousKid: string | null; alg: SigningAlg }> {
      const platform = await platforms.get(actor, platformId);
      if (isAsymmetricAlg(alg) && platform.signingProfile !== 'standard') {
        throw conflict(`${alg} keys belong to the standard signing profile: this platform uses "${platform.signingProfile}" (admin platform update --profile standard)`);
      }
      const rotated = await deps.db.transaction(async (trx) => {
        const previousKid = (await keys.findActive(trx, platformId, alg))?.kid ?? null;
        const kid = await signingKeys.rotate(trx, platformId, alg);
        // The details of an HS512 rotation stay as they were; other algs name theirs.
        await audit.record(trx, actor, { kind: 'key.rotated', platformId, details: alg === 'HS512' ? { kid, previous_kid: previousKid } : { kid, previous_kid: previousKid, alg } });
        return { kid, previousKid, alg };
      });
      signingKeys.forget(platformId);
      return rotated;
    },

    /**
     * Ends a rotated-out key's grace: it verifies nothing from now (its tokens are refused) and
     * leaves the JWKS. The active key cannot be retired (rotate first); a key already retired
     * stays as it is (no new event).
     */
    async retire(actor: AdminActor, platformId: string, kid: string): Promise<AdminSigningKey> {
      await platforms.get(actor, platformId);
      const changed = await deps.db.transaction(async (trx) => {
        const row = await keys.findByKid(trx, platformId, kid);
        if (!row) throw unknownKey(kid);
        const before = describe(row);
        if (before.status === 'active') throw conflict(`key "${kid}" is the active signing key: rotate first (POST …/keys/rotate, admin key rotate), then retire it`);
        if (before.status === 'retired') return false;
        await keys.withdraw(trx, platformId, kid, deps.now());
        await audit.record(trx, actor, { kind: 'key.retired', platformId, details: { kid, status: { from: before.status, to: 'retired' } } });
        return true;
      });
      if (changed) signingKeys.forget(platformId);
      const row = await keys.findByKid(deps.db, platformId, kid);
      return describe(row!);
    },
  };
}

export type KeysAdmin = ReturnType<typeof createKeysAdmin>;
