import type { Notifications } from '../db/notifications';
import { onSigningKeysChanged, onUserInvalidated } from '../db/invalidation';
import type { AccessTokenRecord } from '../repositories/token.repository';
import type { User } from '../domain/user';

export interface LiveAccessToken {
  token: AccessTokenRecord;
  user: User;
}

const MAX_ENTRIES = 100_000;

/**
 * Verified, live access tokens with their users, keyed by the SHA-256 of the whole token, so a
 * repeated userinfo/introspection needs neither a signature check nor a database round trip.
 * It serves only while this process is LISTENing for invalidations (any miss of a notification
 * empties it), and an entry read before an invalidation is never stored after it (epoch check).
 */
export function createAccessTokenCache(notifications: Notifications | undefined) {
  const entries = new Map<string, LiveAccessToken>();
  const keysByUser = new Map<string, Set<string>>();
  let listening = false;
  let epoch = 0;

  function clear() {
    epoch++;
    entries.clear();
    keysByUser.clear();
  }

  function invalidateUser(userId: string) {
    epoch++;
    const keys = keysByUser.get(userId);
    if (!keys) return;
    for (const k of keys) entries.delete(k);
    keysByUser.delete(userId);
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
      if (!listening || readAtEpoch !== epoch) return;
      if (entries.size >= MAX_ENTRIES) clear();
      entries.set(tokenDigest, live);
      const keys = keysByUser.get(live.user.id) ?? new Set<string>();
      keys.add(tokenDigest);
      keysByUser.set(live.user.id, keys);
    },

    dispose: () => {
      unsubscribeLocal();
      unsubscribeKeys();
    },
  };
}

export type AccessTokenCache = ReturnType<typeof createAccessTokenCache>;
