import type { AuditContext } from './audit';

/**
 * Who calls an admin service: an admin API token, a console operator or the CLI,
 * with the request's audit context. `platformId` null is global; otherwise the actor sees and
 * changes that one platform only — another platform is "unknown" to it, never "forbidden".
 */
export interface AdminActor extends AuditContext {
  actorType: 'admin_token' | 'operator' | 'cli';
  platformId: string | null;
}

/** The CLI runs with the database's own authority: global. */
export function cliActor(osUser?: string): AdminActor {
  return {
    actorType: 'cli',
    actorId: osUser ?? null,
    actorName: osUser ? `admin CLI (${osUser})` : 'admin CLI',
    platformId: null,
  };
}

/** Cursor-paged lists (admin API, CLI, console): at most this many per page. */
export const ADMIN_PAGE_MAX = 200;
export const ADMIN_PAGE_DEFAULT = 50;
