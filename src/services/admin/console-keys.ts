import type { AdminActor } from '../../domain/admin';
import * as keys from '../../repositories/signing-key.repository';
import type { Deps } from '../deps';
import type { Audit } from '../audit.service';
import type { Platforms } from '../platforms.service';
import type { SigningKeys } from '../signing-keys.service';
import { assertPlatformAccess } from './access';

/** A signing key as the console lists it: never its secret. */
export interface ConsoleKey {
  kid: string;
  alg: 'HS512';
  status: 'active' | 'retired';
  createdAt: Date;
  retiredAt: Date | null;
}

/**
 * A platform's signing keys for the console until the admin keys service (list, rotate, retire)
 * lands: the keys that still verify (the active one, and rotated-out ones while their tokens may
 * live), and an audited rotation.
 */
export function createConsoleKeys(deps: Deps, platforms: Platforms, signingKeys: SigningKeys, audit: Audit) {
  return {
    async list(actor: AdminActor, platformId: string): Promise<ConsoleKey[]> {
      assertPlatformAccess(actor, platformId);
      await platforms.requirePlatform(platformId);
      const retiredAfter = new Date(deps.now().getTime() - deps.config.accessTokenTtlSeconds * 1000);
      return (await keys.listUsable(deps.db, platformId, retiredAfter)).map((k) => ({ kid: k.kid, alg: 'HS512', status: k.status, createdAt: k.createdAt, retiredAt: k.retiredAt }));
    },

    /** A new active key; the old one keeps verifying its tokens until they expire. Returns the new kid. */
    async rotate(actor: AdminActor, platformId: string): Promise<string> {
      assertPlatformAccess(actor, platformId);
      await platforms.requirePlatform(platformId);
      return deps.db.transaction(async (trx) => {
        const kid = await signingKeys.rotate(trx, platformId);
        await audit.record(trx, actor, { kind: 'key.rotated', platformId, details: { kid } });
        return kid;
      });
    },
  };
}

export type ConsoleKeys = ReturnType<typeof createConsoleKeys>;
