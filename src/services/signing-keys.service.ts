import { randomUUID } from 'node:crypto';
import type { Queryable } from '../db';
import type { Notifications } from '../db/notifications';
import { signingKeysChanged } from '../db/invalidation';
import * as keys from '../repositories/signing-key.repository';
import { newSigningKeyBytes } from '../crypto/random';
import { importHs512Key } from '../crypto/jwt';
import type { Deps } from './deps';
import { createTtlCache } from './ttl-cache';
import { isUuid } from '../domain/ids';

export interface SigningKey {
  kid: string;
  secret: CryptoKey;
  isActive: boolean;
}

const CACHE_SECONDS = 30;

/**
 * Platform HS512 keys, unsealed once and cached briefly per platform. A rotated-out key still
 * verifies until the tokens it signed have expired (DESIGN §5); an operator may retire it sooner
 * (admin key retire), which every instance learns through NOTIFY (`keys:<platform id>`, raised by
 * the signing_keys trigger) and drops its cached keys at once; the TTL bounds a missed notification.
 */
export function createSigningKeys(deps: Deps, notifications?: Notifications) {
  const cache = createTtlCache<SigningKey[]>(deps.now, { ttlMs: CACHE_SECONDS * 1000 });
  notifications?.subscribe('latchkey_cache', {
    onMessage: (payload) => payload.startsWith('keys:') && cache.delete(payload.slice(5)),
    onListening: () => {},
  });

  async function load(platformId: string): Promise<SigningKey[]> {
    const retiredAfter = new Date(deps.now().getTime() - deps.config.accessTokenTtlSeconds * 1000);
    const rows = await keys.listUsable(deps.db, platformId, retiredAfter);
    const loaded = await Promise.all(
      rows.map(async (r) => ({ kid: r.kid, secret: await importHs512Key(deps.sealer.unseal(r.sealedSecret)), isActive: r.status === 'active' })),
    );
    cache.set(platformId, loaded);
    return loaded;
  }

  async function usableKeys(platformId: string): Promise<SigningKey[]> {
    return cache.get(platformId)?.value ?? load(platformId);
  }

  const platformOfKid = new Map<string, string>(); // a kid never moves between platforms

  return {
    usableKeys,

    /** The platform a kid belongs to (kids are globally unique), for tokens presented without platform_guid. */
    async platformIdOfKid(kid: string): Promise<string | undefined> {
      let platformId = platformOfKid.get(kid);
      if (!platformId && isUuid(kid)) {
        platformId = await keys.findPlatformIdByKid(deps.db, kid);
        if (platformId) platformOfKid.set(kid, platformId);
      }
      return platformId;
    },

    /** The key new tokens are signed with. */
    async activeKey(platformId: string): Promise<SigningKey> {
      const active = (await usableKeys(platformId)).find((k) => k.isActive) ?? (await load(platformId)).find((k) => k.isActive);
      if (!active) throw new Error(`platform ${platformId} has no active signing key`);
      return active;
    },

    /** A key by kid; reloads once on a miss so a rotation on another instance is seen at once. */
    async keyById(platformId: string, kid: string): Promise<SigningKey | undefined> {
      return (await usableKeys(platformId)).find((k) => k.kid === kid) ?? (await load(platformId)).find((k) => k.kid === kid);
    },

    /**
     * After a committed key change: this instance reloads the platform's keys and drops verified
     * tokens it cached (the access-token cache listens), at once rather than on the NOTIFY's arrival.
     */
    forget(platformId: string): void {
      cache.delete(platformId);
      signingKeysChanged(platformId);
    },

    /** Retires the active key and creates a new one; returns the new kid. Pass a transaction. */
    async rotate(db: Queryable, platformId: string): Promise<string> {
      const kid = randomUUID();
      await keys.retireActive(db, platformId, deps.now());
      await keys.insertActive(db, { kid, platformId, sealedSecret: deps.sealer.seal(newSigningKeyBytes()) });
      cache.delete(platformId);
      return kid;
    },
  };
}

export type SigningKeys = ReturnType<typeof createSigningKeys>;
