import type { z } from 'zod';
import type { AdminActor } from '../../domain/admin';
import type { AuditEvent, AuditFilter } from '../../domain/audit';
import { invalidRequest } from '../../errors';
import type { Audit } from '../audit.service';
import { assertGlobal } from './access';
import type { PlatformsAdmin } from './platforms.admin';
import type { AuditQuery } from '../../wire/admin/audit.schemas';

/**
 * The audit service pages by event id (newest first); outside it is an opaque cursor, so that
 * clients do not build their own and the paging may change without breaking them.
 */
const encode = (id: string) => Buffer.from(`audit:${id}`).toString('base64url');

function decode(cursor: string | undefined): string | undefined {
  if (cursor === undefined) return undefined;
  const m = /^audit:(\d{1,18})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!m) throw invalidRequest('cursor is not one this server gave out');
  return m[1];
}

/** The audit log for operators: one platform's events (platform actors see nothing else), or any (global actors). */
export function createAuditAdmin(platforms: PlatformsAdmin, audit: Audit) {
  return {
    /**
     * Newest first. `platformId` null: every event (global actors only), optionally one
     * platform's; otherwise that platform's events only — events of no platform are not among them.
     */
    async list(
      actor: AdminActor,
      platformId: string | null,
      query: z.infer<typeof AuditQuery> & { platform_guid?: string },
    ): Promise<{ items: AuditEvent[]; nextCursor: string | null }> {
      if (platformId === null) assertGlobal(actor, "reading every platform's audit events");
      else await platforms.get(actor, platformId);
      const filter: AuditFilter = {
        platformId: platformId ?? query.platform_guid,
        kind: query.kind,
        subject: query.subject,
        clientId: query.client_id,
        actorType: query.actor_type,
        since: query.since ? new Date(query.since) : undefined,
        until: query.until ? new Date(query.until) : undefined,
        before: decode(query.cursor),
      };
      if (filter.since && filter.until && filter.since >= filter.until)
        throw invalidRequest('since: must be before until');
      const { events, nextCursor } = await audit.list(filter, query.limit);
      return { items: events, nextCursor: nextCursor === null ? null : encode(nextCursor) };
    },
  };
}

export type AuditAdmin = ReturnType<typeof createAuditAdmin>;
