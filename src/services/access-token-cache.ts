import { LRUCache } from 'lru-cache';
import type { Notifications } from '../db/notifications';
import { onSigningKeysChanged, onUserInvalidated } from '../db/invalidation';
import type { AccessTokenRecord } from '../domain/tokens';
import { familyOf } from '../domain/access-token-id';
import type { User } from '../domain/user';
import { approximateBytes } from './approximate-bytes';

export interface LiveAccessToken {
  token: AccessTokenRecord;
  /** null: a client credentials token (no user). */
  user: User | null;
}

/** What the cache may hold in all; the least recently used token goes first (docs/decisions.md, "Memory stays flat"). */
const ACCESS_TOKEN_CACHE_BYTES = 16 * 1024 * 1024;

/**
 * Verified, live access tokens with their users, keyed by the SHA-256 of the whole token, so a
 * repeated userinfo/introspection needs neither a signature check nor a database round trip.
 * It serves only while this process is LISTENing for invalidations (any miss of a notification
 * empties it), and an entry read before an invalidation is never stored after it (epoch check).
 * Bounded in bytes, least recently used first; a refresh drops the tokens of its grant, which the
 * new access token supersedes (they stay valid until they expire, they are just not kept here).
 */
export function createAccessTokenCache(notifications: Notifications | undefined, maxBytes = ACCESS_TOKEN_CACHE_BYTES) {
  const keysByUser = new Map<string, Set<string>>();
  const keysByFamily = new Map<string, Set<string>>();
  const unindex = (index: Map<string, Set<string>>, id: string | null, key: string) => {
    const keys = id === null ? undefined : index.get(id);
    if (!keys) return;
    keys.delete(key);
    if (!keys.size) index.delete(id!);
  };
  const entries = new LRUCache<string, LiveAccessToken>({
    maxSize: maxBytes,
    sizeCalculation: (live, key) => approximateBytes(live) + 2 * key.length,
    // Evicted, deleted or replaced: the indexes forget the key with it.
    dispose: (live, key) => {
      unindex(keysByUser, live.user?.id ?? null, key);
      unindex(keysByFamily, familyOf(live.token.anchor), key);
    },
  });
  const index = (map: Map<string, Set<string>>, id: string, key: string) => {
    const keys = map.get(id) ?? new Set<string>();
    keys.add(key);
    map.set(id, keys);
  };
  let listening = false;
  let epoch = 0;

  function clear() {
    epoch++;
    entries.clear();
    keysByUser.clear();
    keysByFamily.clear();
  }

  function invalidateUser(userId: string) {
    epoch++;
    for (const k of [...(keysByUser.get(userId) ?? [])]) entries.delete(k);
  }

  const unsubscribeLocal = onUserInvalidated(invalidateUser);
  // A key retired (or rotated): tokens it signed may no longer verify. Rare enough to start over.
  const unsubscribeKeys = onSigningKeysChanged(clear);
  notifications?.subscribe('latchkey_cache', {
    onMessage: (payload) => {
      if (payload.startsWith('user:')) invalidateUser(payload.slice(5));
      else if (payload.startsWith('keys:')) clear();
    },
    onListening: (isListening) => {
      listening = isListening;
      clear();
    },
  });

  return {
    /** A snapshot to pass to put(): stale reads taken before an invalidation are dropped. */
    epoch: () => epoch,

    get(tokenDigest: string, now: Date): LiveAccessToken | undefined {
      if (!listening) return undefined;
      const hit = entries.get(tokenDigest);
      if (hit && hit.token.expiresAt <= now) {
        entries.delete(tokenDigest);
        return undefined;
      }
      return hit;
    },

    put(tokenDigest: string, live: LiveAccessToken, readAtEpoch: number): void {
      // A client credentials token is not kept: its revocation names no user for the
      // invalidation to reach (docs/decisions.md, "Machine and device clients").
      if (!listening || readAtEpoch !== epoch || !live.user) return;
      entries.set(tokenDigest, live);
      if (!entries.has(tokenDigest)) return; // larger than the whole cache: not kept
      index(keysByUser, live.user.id, tokenDigest);
      const familyId = familyOf(live.token.anchor);
      if (familyId) index(keysByFamily, familyId, tokenDigest);
    },

    /** A refresh of this grant superseded its earlier access tokens: they need not be kept. */
    dropFamily(familyId: string): void {
      for (const k of [...(keysByFamily.get(familyId) ?? [])]) entries.delete(k);
    },

    /** What it holds now, for the metrics and the tests. */
    stats: () => ({ entries: entries.size, bytes: entries.calculatedSize }),

    dispose: () => {
      unsubscribeLocal();
      unsubscribeKeys();
    },
  };
}

export type AccessTokenCache = ReturnType<typeof createAccessTokenCache>;
