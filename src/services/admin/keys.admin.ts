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
import { dueActivation, keyLifeAt, type KeyState } from '../../domain/key-schedule';
import type { PlatformsAdmin } from './platforms.admin';

export type KeyStatus = KeyState;

/** A signing key as operators see it (never its material). */
export interface AdminSigningKey {
  kid: string;
  alg: SigningAlg;
  status: KeyStatus;
  createdAt: Date;
  /** When it starts (next) or started signing, for a key that went through publication; else null. */
  activatesAt: Date | null;
  /** When a rotation replaced it; null while next or active. */
  rotatedAt: Date | null;
  /** When it stops (retiring) or stopped (retired) verifying; null while next or active. */
  retiredAt: Date | null;
}

/** What a rotation answers: the new kid, the signing key it replaces and, for an asymmetric alg, when the new one signs. */
export interface KeyRotation {
  kid: string;
  previousKid: string | null;
  alg: SigningAlg;
  activatesAt?: Date;
}

/**
 * A platform's signing keys: list, rotate, retire; audited in the change's
 * transaction. Retiring ends a rotated-out key's grace at once: the tokens it signed stop
 * verifying and the JWKS stops listing it, here at once (forget) and on other instances through
 * the signing_keys trigger's NOTIFY.
 */
export function createKeysAdmin(deps: Deps, platforms: PlatformsAdmin, signingKeys: SigningKeys, audit: Audit) {
  /** The same rule as the signer and the verifier (domain/key-schedule), given the platform's next keys. */
  function describe(row: SigningKeyRow, nextKeys: SigningKeyRow[]): AdminSigningKey {
    const now = deps.now();
    const supersededAt = row.status === 'active' ? dueActivation(nextKeys, row.alg, now) : undefined;
    const life = keyLifeAt(row, supersededAt, now, deps.config.accessTokenTtlSeconds);
    return {
      kid: row.kid,
      alg: row.alg,
      createdAt: row.createdAt,
      status: life.state,
      activatesAt: life.activatesAt,
      rotatedAt: life.rotatedAt,
      retiredAt: life.retiredAt,
    };
  }

  const unknownKey = (kid: string) => new OAuthError('not_found', `unknown signing key "${kid}"`);

  return {
    /** Newest first. */
    async list(actor: AdminActor, platformId: string, page: { limit: number; cursor?: string }) {
      await platforms.get(actor, platformId);
      const rows = await keys.listPage(deps.db, platformId, {
        before: decodeCursor(page.cursor),
        limit: page.limit + 1,
      });
      const { items, nextCursor } = toPage(rows, page.limit, (k) => ({ at: k.createdAt, id: k.kid }));
      const nextKeys = await keys.listNext(deps.db, platformId);
      return { items: items.map((k) => describe(k, nextKeys)), nextCursor };
    },

    async get(actor: AdminActor, platformId: string, kid: string): Promise<AdminSigningKey> {
      await platforms.get(actor, platformId);
      const row = await keys.findByKid(deps.db, platformId, kid);
      if (!row) throw unknownKey(kid);
      return describe(row, await keys.listNext(deps.db, platformId));
    },

    /**
     * A new key of `alg` (HS512 unless given). HS512: it signs at once and the one it replaces keeps
     * verifying its tokens until they expire (retiring). RS256, ES256, EdDSA (standard platforms
     * only, 409 on a seed platform): the new key is published at once and signs after
     * SIGNING_KEY_PUBLICATION_SECONDS (`immediately`: at once, for a compromised key); the one it
     * replaces then stays published until its tokens expire.
     */
    async rotate(
      actor: AdminActor,
      platformId: string,
      alg: SigningAlg = 'HS512',
      options: { immediately?: boolean } = {},
    ): Promise<KeyRotation> {
      const platform = await platforms.get(actor, platformId);
      if (isAsymmetricAlg(alg) && platform.signingProfile !== 'standard') {
        throw conflict(
          `${alg} keys belong to the standard signing profile: this platform uses "${platform.signingProfile}" (admin platform update --profile standard)`,
        );
      }
      if (options.immediately && !isAsymmetricAlg(alg))
        throw new OAuthError(
          'invalid_request',
          'immediately: HS512 keys always rotate at once (it applies to RS256, ES256 and EdDSA)',
        );
      const rotated = await deps.db.transaction(async (trx): Promise<KeyRotation> => {
        if (isAsymmetricAlg(alg)) {
          const r = await signingKeys.rotateAsymmetric(trx, platformId, alg, options.immediately);
          await audit.record(trx, actor, {
            kind: 'key.rotated',
            platformId,
            details: {
              kid: r.kid,
              previous_kid: r.previousKid,
              alg,
              activates_at: r.activatesAt.toISOString(),
              immediately: options.immediately ?? false,
              ...(r.replacedKid ? { replaced_next_kid: r.replacedKid } : {}),
            },
          });
          return { kid: r.kid, previousKid: r.previousKid, alg, activatesAt: r.activatesAt };
        }
        const previousKid = (await keys.findActive(trx, platformId, alg))?.kid ?? null;
        const kid = await signingKeys.rotate(trx, platformId, alg);
        // The details of an HS512 rotation stay as they were.
        await audit.record(trx, actor, {
          kind: 'key.rotated',
          platformId,
          details: { kid, previous_kid: previousKid },
        });
        return { kid, previousKid, alg };
      });
      signingKeys.forget(platformId);
      return rotated;
    },

    /**
     * Ends a rotated-out key's grace: it verifies nothing from now (its tokens are refused) and
     * leaves the JWKS. A next key is withdrawn the same way (the rotation is called off; it never
     * signed). The active key cannot be retired (rotate first); a key already retired stays as it
     * is (no new event).
     */
    async retire(actor: AdminActor, platformId: string, kid: string): Promise<AdminSigningKey> {
      await platforms.get(actor, platformId);
      const changed = await deps.db.transaction(async (trx) => {
        // The stored status first catches up with activations that have come.
        await signingKeys.activateDueKeys(trx, platformId);
        const row = await keys.findByKid(trx, platformId, kid);
        if (!row) throw unknownKey(kid);
        const before = describe(row, await keys.listNext(trx, platformId));
        if (before.status === 'active')
          throw conflict(
            `key "${kid}" is the active signing key: rotate first (POST …/keys/rotate, admin key rotate), then retire it`,
          );
        if (before.status === 'retired') return false;
        if (before.status === 'next') await keys.withdrawNext(trx, platformId, row.alg, deps.now());
        else await keys.withdraw(trx, platformId, kid, deps.now());
        await audit.record(trx, actor, {
          kind: 'key.retired',
          platformId,
          details: { kid, status: { from: before.status, to: 'retired' } },
        });
        return true;
      });
      if (changed) signingKeys.forget(platformId);
      const row = await keys.findByKid(deps.db, platformId, kid);
      return describe(row!, await keys.listNext(deps.db, platformId));
    },
  };
}

export type KeysAdmin = ReturnType<typeof createKeysAdmin>;
