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

export function invalidateUsers(userIds: Iterable<string>): void {
  for (const id of new Set(userIds)) for (const l of listeners) l(id);
}
