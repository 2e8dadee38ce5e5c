import { createKeyedDigest } from '../crypto/keyed-digest';

/**
 * The OIDC `sid` of one user's sign-in in one browser (Front-Channel Logout §2, Back-Channel Logout
 * §2.1): a keyed digest of the browser id and the user id, so it is stable across that sign-in's
 * codes and refreshes, the same on every instance, and reveals neither input.
 */
export function createSidOf(masterKey: string): (browserSessionId: string, userId: string) => string {
  const mac = createKeyedDigest(masterKey, 'oidc-sid/v1');
  return (browserSessionId, userId) => mac(`${browserSessionId}:${userId}`).slice(0, 32);
}
