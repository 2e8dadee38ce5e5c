/**
 * In-process signal that a user's tokens or claims changed, raised by the repositories right
 * after they revoke or update. Other instances learn the same through NOTIFY (see the
 * cache-invalidation triggers); this makes the local instance consistent at once.
 */
type Listener = (userId: string) => void;
const listeners = new Set<Listener>();

export function onUserInvalidated(listener: Listener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** A null id (a client credentials token has no user) is skipped. */
export function invalidateUsers(userIds: Iterable<string | null>): void {
  for (const id of new Set(userIds)) if (id !== null) for (const l of listeners) l(id);
}

/**
 * The same for a platform's signing keys (rotated or retired): verified tokens cached on this
 * instance may have been signed by a key that no longer verifies. Other instances learn it from
 * the signing_keys trigger's NOTIFY (`keys:<platform id>`).
 */
type KeysListener = (platformId: string) => void;
const keysListeners = new Set<KeysListener>();

export function onSigningKeysChanged(listener: KeysListener): () => void {
  keysListeners.add(listener);
  return () => keysListeners.delete(listener);
}

export function signingKeysChanged(platformId: string): void {
  for (const l of keysListeners) l(platformId);
}
