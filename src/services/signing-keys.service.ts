import { randomUUID } from 'node:crypto';
import type { Queryable } from '../db';
import type { Notifications } from '../db/notifications';
import { signingKeysChanged } from '../db/invalidation';
import * as keys from '../repositories/signing-key.repository';
import { newSigningKeyBytes } from '../crypto/random';
import { importHs512Key } from '../crypto/jwt';
import { importPrivateJwk, importPublicJwk, newAsymmetricKeyPair } from '../crypto/asymmetric-keys';
import { ASYMMETRIC_ALGS, isAsymmetricAlg, type AsymmetricAlg, type SigningAlg } from '../domain/signing-key';
import type { Deps } from './deps';
import { createTtlCache } from './ttl-cache';
import { isUuid } from '../domain/ids';

export interface SigningKey {
  kid: string;
  secret: CryptoKey;
  isActive: boolean;
}

/** A standard platform's asymmetric key: its public JWK is published; the private key is unsealed only to sign. */
export interface AsymmetricKey {
  kid: string;
  alg: AsymmetricAlg;
  publicJwk: Record<string, string>;
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
  // Asymmetric keys (standard platforms) apart, so that the HS512 path reads exactly what it did.
  const asymmetric = createTtlCache<Array<AsymmetricKey & { privateKey: () => Promise<CryptoKey> }>>(deps.now, { ttlMs: CACHE_SECONDS * 1000 });
  notifications?.subscribe('latchkey_cache', {
    onMessage: (payload) => {
      if (!payload.startsWith('keys:')) return;
      cache.delete(payload.slice(5));
      asymmetric.delete(payload.slice(5));
    },
    onListening: () => {},
  });

  async function loadAsymmetric(platformId: string) {
    const retiredAfter = new Date(deps.now().getTime() - deps.config.accessTokenTtlSeconds * 1000);
    const rows = await keys.listUsable(deps.db, platformId, retiredAfter, ASYMMETRIC_ALGS);
    const loaded = rows.map((r) => {
      let imported: Promise<CryptoKey> | undefined; // unsealed on first use only
      const alg = r.alg as AsymmetricAlg;
      return {
        kid: r.kid,
        alg,
        publicJwk: r.publicJwk!,
        isActive: r.status === 'active',
        privateKey: () => (imported ??= importPrivateJwk(JSON.parse(deps.sealer.unseal(r.sealedPrivateJwk!).toString('utf8')), alg)),
      };
    });
    asymmetric.set(platformId, loaded);
    return loaded;
  }

  const asymmetricKeys = async (platformId: string) => asymmetric.get(platformId)?.value ?? loadAsymmetric(platformId);

  /** A new active asymmetric key of `alg`; the previous one (if any) retires and stays published for its tokens. */
  async function rotateAsymmetric(db: Queryable, platformId: string, alg: AsymmetricAlg): Promise<string> {
    const kid = randomUUID();
    const { privateJwk, publicJwk } = await newAsymmetricKeyPair(alg);
    await keys.retireActive(db, platformId, deps.now(), alg);
    await keys.insertActiveAsymmetric(db, { kid, platformId, alg, sealedPrivateJwk: deps.sealer.seal(JSON.stringify(privateJwk)), publicJwk });
    asymmetric.delete(platformId);
    return kid;
  }

  async function load(platformId: string): Promise<SigningKey[]> {
    const retiredAfter = new Date(deps.now().getTime() - deps.config.accessTokenTtlSeconds * 1000);
    const rows = await keys.listUsable(deps.db, platformId, retiredAfter);
    const loaded = await Promise.all(
      rows.map(async (r) => ({ kid: r.kid, secret: await importHs512Key(deps.sealer.unseal(r.sealedSecret!)), isActive: r.status === 'active' })),
    );
    cache.set(platformId, loaded);
    return loaded;
  }

  async function usableKeys(platformId: string): Promise<SigningKey[]> {
    return cache.get(platformId)?.value ?? load(platformId);
  }

  const platformOfKid = new Map<string, string>(); // a kid never moves between platforms
  const publicKeys = new Map<string, Promise<CryptoKey>>(); // a kid's public key never changes

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
      asymmetric.delete(platformId);
      signingKeysChanged(platformId);
    },

    /** A standard platform's published keys (active and retiring, of every asymmetric alg): public JWKs only. */
    async publishedKeys(platformId: string): Promise<AsymmetricKey[]> {
      return (await asymmetricKeys(platformId)).map(({ kid, alg, publicJwk, isActive }) => ({ kid, alg, publicJwk, isActive }));
    },

    /**
     * A standard platform's published key by kid, as a public CryptoKey with its alg, to verify a
     * token it signed; reloads once on a miss so a rotation on another instance is seen at once.
     */
    async publicKeyById(platformId: string, kid: string): Promise<{ alg: AsymmetricAlg; key: CryptoKey } | undefined> {
      const found = (await asymmetricKeys(platformId)).find((k) => k.kid === kid) ?? (await loadAsymmetric(platformId)).find((k) => k.kid === kid);
      if (!found) return undefined;
      publicKeys.get(kid) ?? publicKeys.set(kid, importPublicJwk(found.publicJwk, found.alg));
      return { alg: found.alg, key: await publicKeys.get(kid)! };
    },

    /** The active key of `alg` of a standard platform, with its private key unsealed, to sign with. */
    async activeAsymmetricKey(platformId: string, alg: AsymmetricAlg): Promise<AsymmetricKey & { privateKey: CryptoKey }> {
      const find = (ks: Awaited<ReturnType<typeof asymmetricKeys>>) => ks.find((k) => k.isActive && k.alg === alg);
      const active = find(await asymmetricKeys(platformId)) ?? find(await loadAsymmetric(platformId));
      if (!active) throw new Error(`platform ${platformId} has no active ${alg} signing key`);
      return { kid: active.kid, alg, publicJwk: active.publicJwk, isActive: true, privateKey: await active.privateKey() };
    },

    /**
     * Gives a standard platform one active key per asymmetric alg, creating those it lacks (at
     * creation, or on switching to standard); returns the kids created. Pass a transaction.
     */
    async ensureAsymmetricKeys(db: Queryable, platformId: string): Promise<Partial<Record<AsymmetricAlg, string>>> {
      const created: Partial<Record<AsymmetricAlg, string>> = {};
      for (const alg of ASYMMETRIC_ALGS) {
        if (!(await keys.findActive(db, platformId, alg))) created[alg] = await rotateAsymmetric(db, platformId, alg);
      }
      return created;
    },

    /** Retires the active key of `alg` (HS512 unless given) and creates a new one; returns the new kid. Pass a transaction. */
    async rotate(db: Queryable, platformId: string, alg: SigningAlg = 'HS512'): Promise<string> {
      if (isAsymmetricAlg(alg)) return rotateAsymmetric(db, platformId, alg);
      const kid = randomUUID();
      await keys.retireActive(db, platformId, deps.now());
      await keys.insertActive(db, { kid, platformId, sealedSecret: deps.sealer.seal(newSigningKeyBytes()) });
      cache.delete(platformId);
      return kid;
    },
  };
}

export type SigningKeys = ReturnType<typeof createSigningKeys>;
