import type { Queryable } from '../db';
import type { MailStatus } from '../domain/mail';

export interface MailOutboxRow {
  id: string;
  platformId: string | null;
  kind: string;
  recipient: string;
  recipientName: string;
  fromName: string;
  subject: string;
  /** Sealed text and HTML parts; null once sent. */
  sealedBody: string | null;
  status: MailStatus;
  attempts: number;
  nextAttemptAt: Date;
  lastError: string | null;
  createdAt: Date;
  sentAt: Date | null;
}

const toRow = (r: any): MailOutboxRow => ({
  id: r.id,
  platformId: r.platform_id,
  kind: r.kind,
  recipient: r.recipient,
  recipientName: r.recipient_name,
  fromName: r.from_name,
  subject: r.subject,
  sealedBody: r.sealed_body,
  status: r.status,
  attempts: r.attempts,
  nextAttemptAt: r.next_attempt_at,
  lastError: r.last_error,
  createdAt: r.created_at,
  sentAt: r.sent_at,
});

// Times in this table come from the database clock: leases and backoff are compared across
// instances, and the database is the one clock they all share.
const secondsFromNow = (db: Queryable, seconds: number) => db.raw(`now() + ? * interval '1 second'`, [seconds]);

export async function insert(
  db: Queryable,
  m: Pick<MailOutboxRow, 'id' | 'platformId' | 'kind' | 'recipient' | 'recipientName' | 'fromName' | 'subject'> & {
    sealedBody: string;
  },
): Promise<void> {
  await db('mail_outbox').insert({
    id: m.id,
    platform_id: m.platformId,
    kind: m.kind,
    recipient: m.recipient,
    recipient_name: m.recipientName,
    from_name: m.fromName,
    subject: m.subject,
    sealed_body: m.sealedBody,
  });
}

/**
 * Claims up to `limit` due mails for this worker: queued ones whose time has come, and ones left
 * in 'sending' by a worker whose lease ran out (it crashed). FOR UPDATE SKIP LOCKED: workers
 * claiming at once each take different rows, never waiting on one another; a row another worker
 * has just claimed no longer matches once its claim commits (its lease is in the future). Each
 * claim counts as an attempt.
 */
export async function claimDue(db: Queryable, limit: number, leaseSeconds: number): Promise<MailOutboxRow[]> {
  const due = db('mail_outbox')
    .select('id')
    .whereIn('status', ['queued', 'sending'])
    .andWhere('next_attempt_at', '<=', db.fn.now())
    .orderBy('next_attempt_at')
    .limit(limit)
    .forUpdate()
    .skipLocked();
  const rows = await db('mail_outbox')
    .whereIn('id', due)
    .update({ status: 'sending', attempts: db.raw('attempts + 1'), next_attempt_at: secondsFromNow(db, leaseSeconds) })
    .returning('*');
  return rows.map(toRow);
}

/** Sent: the body (and any link in it) is dropped. Only the claim that is still current may mark it. */
export async function markSent(db: Queryable, id: string, attempt: number): Promise<boolean> {
  const n = await db('mail_outbox')
    .where({ id, status: 'sending', attempts: attempt })
    .update({ status: 'sent', sent_at: db.fn.now(), sealed_body: null, last_error: null });
  return n > 0;
}

/** A failed attempt: queued again after `retryInSeconds`, or dead. */
export async function markFailed(
  db: Queryable,
  id: string,
  attempt: number,
  f: { dead: boolean; retryInSeconds: number; error: string },
): Promise<boolean> {
  const n = await db('mail_outbox')
    .where({ id, status: 'sending', attempts: attempt })
    .update({
      status: f.dead ? 'dead' : 'queued',
      next_attempt_at: secondsFromNow(db, f.dead ? 0 : f.retryInSeconds),
      last_error: f.error,
    });
  return n > 0;
}

export interface MailFilter {
  status?: MailStatus;
  platformId?: string;
}

const filtered = (db: Queryable, f: MailFilter) => {
  const q = db('mail_outbox');
  if (f.status) q.where('status', f.status);
  if (f.platformId) q.where('platform_id', f.platformId);
  return q;
};

/** Newest first. */
export async function list(db: Queryable, f: MailFilter, limit: number): Promise<MailOutboxRow[]> {
  const rows = await filtered(db, f).orderBy('created_at', 'desc').orderBy('id').limit(limit).select('*');
  return rows.map(toRow);
}

/** Newest first, keyset-paged on (created_at, id) in milliseconds, as the admin cursor carries them. */
export async function listPage(
  db: Queryable,
  f: MailFilter,
  opts: { before?: { at: string; id: string }; limit: number },
): Promise<MailOutboxRow[]> {
  const q = filtered(db, f).orderByRaw("date_trunc('milliseconds', created_at) DESC, id DESC").limit(opts.limit);
  if (opts.before)
    q.whereRaw("(date_trunc('milliseconds', created_at), id) < (?::timestamptz, ?)", [opts.before.at, opts.before.id]);
  return (await q.select('*')).map(toRow);
}

export async function findById(db: Queryable, id: string): Promise<MailOutboxRow | undefined> {
  const row = await db('mail_outbox').where({ id }).first();
  return row ? toRow(row) : undefined;
}

/** How many mails are in each status (queue depth for operators and metrics). */
export async function countByStatus(db: Queryable, platformId?: string): Promise<Record<MailStatus, number>> {
  const rows = await filtered(db, { platformId }).select('status').count({ n: '*' }).groupBy('status');
  const counts: Record<MailStatus, number> = { queued: 0, sending: 0, sent: 0, dead: 0 };
  for (const r of rows as { status: MailStatus; n: number | string }[]) counts[r.status] = Number(r.n);
  return counts;
}

/**
 * Operator retry: a dead mail is queued again with a fresh count of attempts; a queued one is
 * made due now. Sent mails keep no body and cannot be sent again.
 */
export async function requeue(
  db: Queryable,
  select: { id: string } | { allDead: true; platformId?: string },
): Promise<MailOutboxRow[]> {
  const q = db('mail_outbox');
  if ('id' in select) q.where('id', select.id).whereIn('status', ['dead', 'queued']);
  else {
    q.where('status', 'dead');
    if (select.platformId) q.where('platform_id', select.platformId);
  }
  const rows = await q
    .update({
      status: 'queued',
      attempts: db.raw(`CASE WHEN status = 'dead' THEN 0 ELSE attempts END`),
      next_attempt_at: db.fn.now(),
    })
    .returning('*');
  return rows.map(toRow);
}
