import * as auditEvents from '../repositories/audit-event.repository';
import type { Queryable } from '../db';
import type { AuditContext, AuditEvent, AuditEventInput, AuditFilter } from '../domain/audit';
import type { Deps } from './deps';

const AUDIT_PAGE_MAX = 200;

/** The log line of an audit event, once its row is written (by record(), or by a grant's own statement). */
export function logAuditEvent(logger: Deps['logger'], ctx: AuditContext, event: AuditEventInput): void {
  logger.info(
    {
      audit: event.kind,
      actor: ctx.actorType,
      actorId: ctx.actorId,
      platformId: event.platformId,
      sub: event.subject,
      clientId: event.clientId,
      reqId: ctx.requestId,
    },
    `audit ${event.kind}`,
  );
}

/** The audit log: written in the transaction of the change, also logged, never a secret. */
export function createAudit(deps: Deps) {
  return {
    /** Records one event in `q` (pass the transaction of the change so both commit or neither). */
    async record(q: Queryable, ctx: AuditContext, event: AuditEventInput): Promise<void> {
      await auditEvents.insert(q, ctx, event, deps.now());
      logAuditEvent(deps.logger, ctx, event);
    },

    /**
     * Records one event in its own asynchronously committed statement (src/db/async-commit.ts):
     * for an event whose effect only comes with a later durable commit of the same flow (a sign-in
     * leads to a code or a token), which makes it durable too.
     */
    async recordWithAsyncCommit(ctx: AuditContext, event: AuditEventInput): Promise<void> {
      await auditEvents.insertWithAsyncCommit(deps.db, ctx, event, deps.now());
      logAuditEvent(deps.logger, ctx, event);
    },

    /** One page, newest first, and the cursor of the next page (null on the last one). */
    async list(filter: AuditFilter, limit: number): Promise<{ events: AuditEvent[]; nextCursor: string | null }> {
      const size = Math.min(Math.max(limit, 1), AUDIT_PAGE_MAX);
      const rows = await auditEvents.list(deps.db, filter, size + 1);
      const events = rows.slice(0, size);
      return { events, nextCursor: rows.length > size ? events[events.length - 1].id : null };
    },

    /** Drops events older than AUDIT_RETENTION_DAYS; returns how many. */
    async purge(): Promise<number> {
      const before = new Date(deps.now().getTime() - deps.config.auditRetentionDays * 86_400_000);
      let total = 0;
      for (;;) {
        const n = await auditEvents.deleteOlderThan(deps.db, before);
        total += n;
        if (n < 5000) return total;
      }
    },
  };
}

export type Audit = ReturnType<typeof createAudit>;
