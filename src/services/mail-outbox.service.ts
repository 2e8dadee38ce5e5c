import { newId } from '../crypto/random';
import type { Queryable } from '../db';
import { afterCommit } from '../db/after-commit';
import { isUuid } from '../domain/ids';
import { invalidRequest } from '../errors';
import { createMailTransport, type MailMessage, type MailTransport } from '../mail/transport';
import * as outbox from '../repositories/mail-outbox.repository';
import type { MailFilter, MailOutboxRow } from '../repositories/mail-outbox.repository';
import type { MailStatus } from '../domain/mail';
import type { Deps } from './deps';

/** A mail to write to the outbox: the message, the platform it is sent for, and what it is. */
export interface OutgoingMail extends MailMessage {
  platformId: string | null;
  kind: string;
}

/** How a worker delivers; the defaults suit production, tests shorten them. */
export interface DeliveryOptions {
  /** Mails claimed per round (sent concurrently). */
  batchSize: number;
  /** How long a claim holds a mail; a worker that dies while sending gives it up after this. */
  leaseSeconds: number;
  /** Delay after the first failure, doubled after each further one, up to retryMaxSeconds. */
  retryBaseSeconds: number;
  retryMaxSeconds: number;
}

export const DEFAULT_DELIVERY: DeliveryOptions = {
  batchSize: 10,
  leaseSeconds: 300,
  retryBaseSeconds: 30,
  retryMaxSeconds: 3600,
};

export interface DeliveryRound {
  claimed: number;
  sent: number;
  retrying: number;
  dead: number;
}

/**
 * Exponential backoff with "equal jitter": half of the delay fixed, half random, so that the
 * mails (and instances) that failed together during an outage do not all retry in one burst.
 */
export function retryDelaySeconds(
  attempt: number,
  o: Pick<DeliveryOptions, 'retryBaseSeconds' | 'retryMaxSeconds'>,
  random = Math.random,
): number {
  const full = Math.min(o.retryMaxSeconds, o.retryBaseSeconds * 2 ** Math.max(0, attempt - 1));
  return full / 2 + (random() * full) / 2;
}

/** RFC 5321 §4.2.1: a 5yz reply to RCPT is permanent; sending again cannot help that recipient. */
function isPermanent(err: unknown): boolean {
  const e = err as { responseCode?: number; command?: string };
  return typeof e.responseCode === 'number' && e.responseCode >= 500 && e.responseCode < 600 && e.command === 'RCPT TO';
}

/** What operators see of a failure: the library's code and message, never a credential. */
export function describeFailure(err: unknown): string {
  const e = err as { message?: string; code?: string; command?: string };
  const text = [e.code, e.command && `(${e.command})`, e.message ?? String(err)].filter(Boolean).join(' ');
  return text.replace(/\b([a-z][a-z0-9+.-]*:\/\/)[^\s/@]*@/gi, '$1***@').slice(0, 500);
}

/**
 * The durable outbox: a mail is a row written in the transaction of the event that
 * causes it, so it exists exactly when the event does. Workers (jobs/mail-outbox.job.ts) on every
 * instance claim due rows, send them, and mark them sent, or queued again with backoff, or dead
 * after MAIL_MAX_ATTEMPTS tries. At least once toward SMTP (a worker that dies after the server
 * accepted a mail but before marking it sends it again after its lease); once across instances.
 */
export function createMailOutbox(
  deps: Deps,
  transport: MailTransport = createMailTransport({
    smtpUrl: deps.config.smtpUrl,
    dataDir: deps.config.dataDir,
    from: deps.config.mailFrom,
  }),
) {
  const listeners = new Set<() => void>();
  const notify = () => listeners.forEach((l) => l());

  async function fail(
    row: MailOutboxRow,
    options: DeliveryOptions,
    error: string,
    permanent: boolean,
  ): Promise<'retrying' | 'dead'> {
    const dead = permanent || row.attempts >= deps.config.mailMaxAttempts;
    const retryInSeconds = retryDelaySeconds(row.attempts, options);
    await outbox.markFailed(deps.db, row.id, row.attempts, { dead, retryInSeconds, error });
    const log = { mailId: row.id, platformId: row.platformId, kind: row.kind, attempts: row.attempts, error };
    if (dead) deps.logger.error(log, 'mail is dead: not sent after its last attempt (admin mail retry)');
    else deps.logger.warn({ ...log, retryInSeconds: Math.round(retryInSeconds) }, 'mail not sent; will retry');
    return dead ? 'dead' : 'retrying';
  }

  async function deliver(row: MailOutboxRow, options: DeliveryOptions): Promise<'sent' | 'retrying' | 'dead'> {
    let body: { text: string; html: string };
    try {
      body = JSON.parse(deps.sealer.unseal(row.sealedBody ?? '').toString('utf8'));
    } catch {
      return fail(row, options, 'the mail body cannot be opened with MASTER_KEY', true);
    }
    const message: MailMessage = {
      to: { name: row.recipientName, address: row.recipient },
      fromName: row.fromName,
      subject: row.subject,
      ...body,
    };
    try {
      await transport.send(message);
    } catch (err) {
      return fail(row, options, describeFailure(err), isPermanent(err));
    }
    // A failure here leaves the row claimed: it is sent again once the lease ends (at least once).
    await outbox.markSent(deps.db, row.id, row.attempts);
    deps.logger.info(
      { mailId: row.id, platformId: row.platformId, kind: row.kind, attempts: row.attempts },
      'mail sent',
    );
    return 'sent';
  }

  return {
    transport,

    /** Writes a mail in `db`'s transaction (text and HTML sealed); workers are woken once it commits. */
    async enqueue(db: Queryable, mail: OutgoingMail): Promise<string> {
      const id = newId();
      await outbox.insert(db, {
        id,
        platformId: mail.platformId,
        kind: mail.kind,
        recipient: mail.to.address,
        recipientName: mail.to.name ?? '',
        fromName: mail.fromName,
        subject: mail.subject,
        sealedBody: deps.sealer.seal(JSON.stringify({ text: mail.text, html: mail.html })),
      });
      afterCommit(db, notify);
      return id;
    },

    /** Called after each committed enqueue of this process (the worker's nudge); returns an unsubscribe. */
    onEnqueued(listener: () => void): () => void {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },

    /** One round: claims due mails and sends them concurrently. */
    async deliverDue(options: DeliveryOptions = DEFAULT_DELIVERY): Promise<DeliveryRound> {
      const rows = await outbox.claimDue(deps.db, options.batchSize, options.leaseSeconds);
      const results = await Promise.allSettled(rows.map((r) => deliver(r, options)));
      const round: DeliveryRound = { claimed: rows.length, sent: 0, retrying: 0, dead: 0 };
      for (const r of results) {
        if (r.status === 'fulfilled') round[r.value] += 1;
        else
          deps.logger.warn(
            { err: (r.reason as Error).message },
            'mail outcome not recorded; it is retried after its lease',
          );
      }
      return round;
    },

    /** Operators: newest first, with the count per status. */
    async list(
      filter: MailFilter,
      limit: number,
    ): Promise<{ mails: MailOutboxRow[]; counts: Record<MailStatus, number> }> {
      const [mails, counts] = await Promise.all([
        outbox.list(deps.db, filter, limit),
        outbox.countByStatus(deps.db, filter.platformId),
      ]);
      return { mails, counts };
    },

    /**
     * Operators: a dead mail is queued again with a fresh count of tries, a waiting one is made due
     * now; returns the mails requeued. Throws invalid_request for an unknown id, or one being sent
     * or already sent. In `db`'s transaction when given (the audit event of an admin retry).
     */
    async retry(
      select: { id: string } | { allDead: true; platformId?: string },
      db: Queryable = deps.db,
    ): Promise<MailOutboxRow[]> {
      if ('id' in select && !isUuid(select.id)) throw invalidRequest(`unknown mail "${select.id}"`);
      const rows = await outbox.requeue(db, select);
      if ('id' in select && rows.length === 0) {
        const row = await outbox.findById(db, select.id);
        throw invalidRequest(
          row
            ? `mail ${row.id} is ${row.status}: only a dead or queued mail can be retried`
            : `unknown mail "${select.id}"`,
        );
      }
      if (rows.length) afterCommit(db, notify);
      return rows;
    },

    countByStatus: (platformId?: string) => outbox.countByStatus(deps.db, platformId),
  };
}

export type MailOutbox = ReturnType<typeof createMailOutbox>;
