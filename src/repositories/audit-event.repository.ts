import type { Queryable } from '../db';
import { ASYNC_COMMIT } from '../db/async-commit';
import type { AuditContext, AuditEvent, AuditEventInput, AuditFilter } from '../domain/audit';

const toEvent = (r: any): AuditEvent => ({
  id: String(r.id),
  occurredAt: r.occurred_at,
  kind: r.kind,
  actorType: r.actor_type,
  actorId: r.actor_id,
  actorName: r.actor_name,
  platformId: r.platform_id,
  subject: r.subject,
  clientId: r.client_id,
  source: r.source,
  userAgent: r.user_agent,
  requestId: r.request_id,
  details: r.details ?? {},
});

/** An event as its row's columns, for insert() and for a grant statement that appends one in the same statement. */
export function auditRow(ctx: AuditContext, e: AuditEventInput, occurredAt: Date) {
  return {
    occurred_at: occurredAt,
    kind: e.kind,
    actor_type: ctx.actorType,
    actor_id: ctx.actorId ?? null,
    actor_name: ctx.actorName ?? null,
    platform_id: e.platformId ?? null,
    subject: e.subject ?? null,
    client_id: e.clientId ?? null,
    source: ctx.source ?? null,
    user_agent: ctx.userAgent?.slice(0, 512) ?? null,
    request_id: ctx.requestId ?? null,
    details: JSON.stringify(e.details ?? {}),
  };
}

/** The columns of auditRow(), in its order. */
export const AUDIT_COLUMNS = [
  'occurred_at',
  'kind',
  'actor_type',
  'actor_id',
  'actor_name',
  'platform_id',
  'subject',
  'client_id',
  'source',
  'user_agent',
  'request_id',
  'details',
] as const;

/** SQL types of the audit columns: parameters in a SELECT list are not typed by the column they fill. */
const AUDIT_TYPES: Record<(typeof AUDIT_COLUMNS)[number], string> = {
  occurred_at: 'timestamptz',
  kind: 'text',
  actor_type: 'text',
  actor_id: 'text',
  actor_name: 'text',
  platform_id: 'uuid',
  subject: 'uuid',
  client_id: 'uuid',
  source: 'text',
  user_agent: 'text',
  request_id: 'text',
  details: 'jsonb',
};

/** Appends the audit event for each row of `from`, its values from parameter `first` on (for statements that write an event beside their change). */
export const auditInsert = (first: number, from: string) =>
  `INSERT INTO audit_events (${AUDIT_COLUMNS.join(', ')})
   SELECT ${AUDIT_COLUMNS.map((c, i) => `CAST($${first + i} AS ${AUDIT_TYPES[c]})`).join(', ')} FROM ${from}`;

export const auditValues = (audit: { ctx: AuditContext; event: AuditEventInput }, at: Date) => {
  const row = auditRow(audit.ctx, audit.event, at);
  return AUDIT_COLUMNS.map((c) => row[c]);
};

/** Appends one event; `db` is the transaction of the change it records. */
export async function insert(db: Queryable, ctx: AuditContext, e: AuditEventInput, occurredAt: Date): Promise<void> {
  await db('audit_events').insert(auditRow(ctx, e, occurredAt));
}

/**
 * Appends one event on its own, committed asynchronously (src/db/async-commit.ts): for an event
 * of a flow whose effect comes with a later durable commit. `db` is the pool, never a transaction.
 */
export async function insertWithAsyncCommit(
  db: Queryable,
  ctx: AuditContext,
  e: AuditEventInput,
  occurredAt: Date,
): Promise<void> {
  await db.raw(auditInsert(1, ASYNC_COMMIT).replace(/\$(\d+)/g, '?'), auditValues({ ctx, event: e }, occurredAt));
}

/** Newest first; `before` is the id of the last event of the previous page. */
export async function list(db: Queryable, f: AuditFilter, limit: number): Promise<AuditEvent[]> {
  const q = db('audit_events').orderBy('id', 'desc').limit(limit);
  if (f.platformId) q.where('platform_id', f.platformId);
  if (f.subject) q.where('subject', f.subject);
  if (f.clientId) q.where('client_id', f.clientId);
  if (f.kind) q.where('kind', f.kind);
  if (f.actorType) q.where('actor_type', f.actorType);
  if (f.since) q.where('occurred_at', '>=', f.since);
  if (f.until) q.where('occurred_at', '<', f.until);
  if (f.before) q.where('id', '<', f.before);
  return (await q).map(toEvent);
}

/** Retention: events older than `before` go, in one statement per call (the purge job repeats). */
export async function deleteOlderThan(db: Queryable, before: Date, batch = 5000): Promise<number> {
  const result = await db.raw(
    `DELETE FROM audit_events WHERE id = ANY(ARRAY(SELECT id FROM audit_events WHERE occurred_at < ? ORDER BY id LIMIT ? FOR UPDATE SKIP LOCKED))`,
    [before, batch],
  );
  return result.rowCount ?? 0;
}
