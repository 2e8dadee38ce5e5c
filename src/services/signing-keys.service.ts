import { randomUUID } from 'node:crypto';
import type { Queryable } from '../db';
import type { Notifications } from '../db/notifications';
import { signingKeysChanged } from '../db/invalidation';
import * as keys from '../repositories/signing-key.repository';
import { newSigningKeyBytes } from '../crypto/random';
import { importHs512Key } from '../crypto/jwt';
import { importPrivateJwk, importPublicJwk, newAsymmetricKeyPair } from '../crypto/asymmetric-keys';
import { ASYMMETRIC_ALGS, isAsymmetricAlg, type AsymmetricAlg, type SigningAlg } from '../domain/signing-key';
import { dueActivation, keyLifeAt, type KeyState, type StoredKeyLife } from '../domain/key-schedule';
import type { Deps } from './deps';
import { coherentTtlMs, createTtlCache, perPlatformBounds } from './ttl-cache';
import { BoundedLru } from './bounded-lru';
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
  /** next, active or retiring (the published ones), at the time of the call. */
  state: KeyState;
}

/** An asymmetric rotation: the new kid, the signing key it replaces, and when the new one signs. */
export interface AsymmetricRotation {
  kid: string;
  previousKid: string | null;
  activatesAt: Date;
  /** A next key that had not started signing yet and that this rotation replaced. */
  replacedKid: string | null;
}

/**
 * An asymmetric key as loaded (and cached): its public half and its stored life (the state is
 * worked out per call). No private material: that is read, unsealed and imported by kid when the
 * key first signs (privateKeyOf).
 */
interface LoadedAsymmetricKey {
  kid: string;
  alg: AsymmetricAlg;
  publicJwk: Record<string, string>;
  stored: StoredKeyLife & { alg: AsymmetricAlg };
}

/** Kids of one platform held by kid (HS512 and three asymmetric algs, and rotations in flight). */
const KIDS_PER_PLATFORM = 8;

/** Without notifications (the embedded database): how long a platform's keys are cached. */
const CACHE_SECONDS = 30;

/**
 * Platform keys, cached per platform until changed. A rotated-out key still verifies until the
 * tokens it signed have expired; an operator may retire it sooner (admin key retire), which every
 * instance learns through NOTIFY (`keys:<platform id>`, raised by the signing_keys trigger) and
 * drops its cached keys at once; a lost LISTEN connection clears them.
 */
export function createSigningKeys(deps: Deps, notifications?: Notifications) {
  const bounds = { ttlMs: coherentTtlMs(notifications, CACHE_SECONDS * 1000), ...perPlatformBounds(deps.config) };
  const cache = createTtlCache<SigningKey[]>(deps.now, bounds);
  // Asymmetric keys (standard platforms) apart, so that the HS512 path reads exactly what it did.
  const asymmetric = createTtlCache<LoadedAsymmetricKey[]>(deps.now, bounds);
  // By kid, which never changes platform or key: bounded like the other per-platform caches, a
  // few kids a platform (its algs, and a rotation's next and retiring keys).
  const kidBound = { maxEntries: deps.config.platformCacheSize * KIDS_PER_PLATFORM };
  // A kid's private key never changes: imported once, kept across the reloads of its platform's keys.
  const privateKeys = new BoundedLru<string, Promise<CryptoKey>>(kidBound);
  notifications?.subscribe('latchkey_cache', {
    onMessage: (payload) => {
      if (!payload.startsWith('keys:')) return;
      cache.delete(payload.slice(5));
      asymmetric.delete(payload.slice(5));
    },
    onListening: () => {
      // Notifications may have been missed: start over.
      cache.clear();
      asymmetric.clear();
    },
  });

  const loadAsymmetric = (platformId: string) => asymmetric.reload(platformId, () => readAsymmetric(platformId));

  async function readAsymmetric(platformId: string): Promise<LoadedAsymmetricKey[]> {
    const retiredAfter = new Date(deps.now().getTime() - deps.config.accessTokenTtlSeconds * 1000);
    const rows = await keys.listUsable(deps.db, platformId, retiredAfter, ASYMMETRIC_ALGS);
    return rows.map((r) => ({
      kid: r.kid,
      alg: r.alg as AsymmetricAlg,
      publicJwk: r.publicJwk!,
      stored: {
        alg: r.alg as AsymmetricAlg,
        status: r.status,
        createdAt: r.createdAt,
        activatesAt: r.activatesAt,
        retiredAt: r.retiredAt,
        withdrawnAt: r.withdrawnAt,
      },
    }));
  }

  /** The key's private half: read, unsealed and imported on its first signature; a failure is not kept. */
  function privateKeyOf(key: { kid: string; alg: AsymmetricAlg }): Promise<CryptoKey> {
    let imported = privateKeys.get(key.kid);
    if (!imported) {
      const importing = (async () => {
        const sealed = await keys.findSealedPrivateJwk(deps.db, key.kid);
        if (!sealed) throw new Error(`signing key ${key.kid} has no private key`);
        return importPrivateJwk(JSON.parse(deps.sealer.unseal(sealed).toString('utf8')), key.alg);
      })();
      importing.catch(() => privateKeys.get(key.kid) === importing && privateKeys.delete(key.kid));
      privateKeys.set(key.kid, importing);
      imported = importing;
    }
    return imported;
  }

  const asymmetricKeys = async (platformId: string) => asymmetric.get(platformId)?.value ?? loadAsymmetric(platformId);

  /**
   * The loaded keys with their state now (domain/key-schedule): decided from the stored times at
   * each call, so a next key starts signing at its activates_at on every instance at once, cached or not.
   */
  function withStates(loaded: LoadedAsymmetricKey[]) {
    const now = deps.now();
    const stored = loaded.map((k) => k.stored);
    return loaded
      .map((k) => {
        const supersededAt = k.stored.status === 'active' ? dueActivation(stored, k.alg, now) : undefined;
        return { ...k, state: keyLifeAt(k.stored, supersededAt, now, deps.config.accessTokenTtlSeconds).state };
      })
      .filter((k) => k.state !== 'retired');
  }

  const newSealedPair = async (alg: AsymmetricAlg) => {
    const { privateJwk, publicJwk } = await newAsymmetricKeyPair(alg);
    return { kid: randomUUID(), sealedPrivateJwk: deps.sealer.seal(JSON.stringify(privateJwk)), publicJwk };
  };

  /**
   * Rotates the key of `alg` (the next key is published before it signs; the old one is
   * kept until its last token expires). The new key is published at once and signs after
   * SIGNING_KEY_PUBLICATION_SECONDS — or at once with `immediately` (a compromised key). A next key
   * still waiting is replaced (it never signed). Pass a transaction.
   */
  async function rotateAsymmetric(
    db: Queryable,
    platformId: string,
    alg: AsymmetricAlg,
    immediately = false,
  ): Promise<AsymmetricRotation> {
    const now = deps.now();
    await keys.activateDueNext(db, platformId, alg, now);
    const previousKid = (await keys.findActive(db, platformId, alg))?.kid ?? null;
    const replacedKid = (await keys.withdrawNext(db, platformId, alg, now)) ?? null;
    const key = await newSealedPair(alg);
    if (immediately) {
      await keys.retireActive(db, platformId, now, alg);
      await keys.insertAsymmetric(db, { ...key, platformId, alg });
    } else {
      const activatesAt = new Date(now.getTime() + deps.config.signingKeyPublicationSeconds * 1000);
      await keys.insertAsymmetric(db, { ...key, platformId, alg, activatesAt });
      asymmetric.delete(platformId);
      return { kid: key.kid, previousKid, activatesAt, replacedKid };
    }
    asymmetric.delete(platformId);
    return { kid: key.kid, previousKid, activatesAt: now, replacedKid };
  }

  const load = (platformId: string) =>
    cache.reload(platformId, async () => {
      const retiredAfter = new Date(deps.now().getTime() - deps.config.accessTokenTtlSeconds * 1000);
      const rows = await keys.listUsable(deps.db, platformId, retiredAfter);
      return Promise.all(
        rows.map(async (r) => ({
          kid: r.kid,
          secret: await importHs512Key(deps.sealer.unseal(r.sealedSecret!)),
          isActive: r.status === 'active',
        })),
      );
    });

  async function usableKeys(platformId: string): Promise<SigningKey[]> {
    return cache.get(platformId)?.value ?? load(platformId);
  }

  const platformOfKid = new BoundedLru<string, string>(kidBound);
  const publicKeys = new BoundedLru<string, Promise<CryptoKey>>(kidBound);

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
      const active =
        (await usableKeys(platformId)).find((k) => k.isActive) ?? (await load(platformId)).find((k) => k.isActive);
      if (!active) throw new Error(`platform ${platformId} has no active signing key`);
      return active;
    },

    /** A key by kid; reloads once on a miss so a rotation on another instance is seen at once. */
    async keyById(platformId: string, kid: string): Promise<SigningKey | undefined> {
      return (
        (await usableKeys(platformId)).find((k) => k.kid === kid) ?? (await load(platformId)).find((k) => k.kid === kid)
      );
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

    /** A standard platform's published keys (next, active and retiring, of every asymmetric alg): public JWKs only. */
    async publishedKeys(platformId: string): Promise<AsymmetricKey[]> {
      return withStates(await asymmetricKeys(platformId)).map(({ kid, alg, publicJwk, state }) => ({
        kid,
        alg,
        publicJwk,
        isActive: state === 'active',
        state,
      }));
    },

    /**
     * A standard platform's published key by kid, as a public CryptoKey with its alg, to verify a
     * token it signed; reloads once on a miss so a rotation on another instance is seen at once.
     */
    async publicKeyById(platformId: string, kid: string): Promise<{ alg: AsymmetricAlg; key: CryptoKey } | undefined> {
      // A next key verifies too: another instance's clock may pass its activation a moment sooner.
      const found =
        withStates(await asymmetricKeys(platformId)).find((k) => k.kid === kid) ??
        withStates(await loadAsymmetric(platformId)).find((k) => k.kid === kid);
      if (!found) return undefined;
      let key = publicKeys.get(kid);
      if (!key) publicKeys.set(kid, (key = importPublicJwk(found.publicJwk, found.alg)));
      return { alg: found.alg, key: await key };
    },

    /** The key of `alg` that signs now on a standard platform (a next key from its activation on), with its private key unsealed. */
    async activeAsymmetricKey(
      platformId: string,
      alg: AsymmetricAlg,
    ): Promise<AsymmetricKey & { privateKey: CryptoKey }> {
      const find = (ks: LoadedAsymmetricKey[]) => withStates(ks).find((k) => k.state === 'active' && k.alg === alg);
      const active = find(await asymmetricKeys(platformId)) ?? find(await loadAsymmetric(platformId));
      if (!active) throw new Error(`platform ${platformId} has no active ${alg} signing key`);
      return {
        kid: active.kid,
        alg,
        publicJwk: active.publicJwk,
        isActive: true,
        state: 'active',
        privateKey: await privateKeyOf(active),
      };
    },

    /**
     * Gives a standard platform one active key per asymmetric alg, creating those it lacks (at
     * creation, or on switching to standard), active at once: nothing was signed before them.
     * Returns the kids created. Pass a transaction.
     */
    async ensureAsymmetricKeys(db: Queryable, platformId: string): Promise<Partial<Record<AsymmetricAlg, string>>> {
      const created: Partial<Record<AsymmetricAlg, string>> = {};
      for (const alg of ASYMMETRIC_ALGS) {
        if (await keys.findActive(db, platformId, alg)) continue;
        const key = await newSealedPair(alg);
        await keys.insertAsymmetric(db, { ...key, platformId, alg });
        created[alg] = key.kid;
      }
      asymmetric.delete(platformId);
      return created;
    },

    rotateAsymmetric,

    /**
     * Writes down the activation of the platform's next keys whose time has come (the state is
     * already decided by their activates_at; this keeps the stored status in step before a change).
     */
    async activateDueKeys(db: Queryable, platformId: string): Promise<void> {
      for (const alg of ASYMMETRIC_ALGS) await keys.activateDueNext(db, platformId, alg, deps.now());
    },

    /**
     * A new key of `alg` (HS512 unless given); returns its kid. HS512: the active key retires and the
     * new one signs at once (as the spec's interface always has). Asymmetric: rotateAsymmetric, with
     * the publication delay. Pass a transaction.
     */
    async rotate(db: Queryable, platformId: string, alg: SigningAlg = 'HS512'): Promise<string> {
      if (isAsymmetricAlg(alg)) return (await rotateAsymmetric(db, platformId, alg)).kid;
      const kid = randomUUID();
      await keys.retireActive(db, platformId, deps.now());
      await keys.insertActive(db, { kid, platformId, sealedSecret: deps.sealer.seal(newSigningKeyBytes()) });
      cache.delete(platformId);
      return kid;
    },
  };
}

export type SigningKeys = ReturnType<typeof createSigningKeys>;
