import { OAuthError } from '../../errors';
import type { AdminActor } from '../../domain/admin';

/** A platform outside the actor's scope is as unknown as one that does not exist (no existence leak). */
export function unknownPlatform(id: string) {
  return new OAuthError('not_found', `unknown platform "${id}"`);
}

/** Throws not_found unless the actor may see `platformId`. */
export function assertPlatformAccess(actor: AdminActor, platformId: string): void {
  if (actor.platformId !== null && actor.platformId !== platformId) throw unknownPlatform(platformId);
}

/** Global actors only (creating platforms, tokens of any scope, master-key work). */
export function assertGlobal(actor: AdminActor, what: string): void {
  if (actor.platformId !== null)
    throw new OAuthError('access_denied', `${what} needs a global admin token`, { status: 403 });
}

/** 409: the change does not fit the resource's current state (the description says what to do instead). */
export function conflict(description: string) {
  return new OAuthError('invalid_request', description, { status: 409 });
}
