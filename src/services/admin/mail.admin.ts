import { isUuid } from '../../domain/ids';
import type { AdminActor } from '../../domain/admin';
import { OAuthError } from '../../errors';
import * as outbox from '../../repositories/mail-outbox.repository';
import type { MailOutboxRow } from '../../repositories/mail-outbox.repository';
import type { MailStatus } from '../../domain/mail';
import type { Deps } from '../deps';
import type { Audit } from '../audit.service';
import type { MailOutbox } from '../mail-outbox.service';
import { assertGlobal, assertPlatformAccess, conflict } from './access';
import { decodeCursor, toPage } from './cursor';
import type { PlatformsAdmin } from './platforms.admin';

/** Which mails to requeue: one by id, or every dead one (of a platform, or of all for a global actor). */
export type MailRetrySelect = { id: string } | { allDead: true };

/**
 * The mail outbox as operators manage it (API, CLI, console): lists with counts (never a body),
 * retry one or every dead mail, audited (mail.retried) in the retry's transaction. A platform
 * actor sees its platform's mails only; another platform's mail is as unknown as a missing one.
 */
export function createMailAdmin(deps: Deps, platforms: PlatformsAdmin, mailOutbox: MailOutbox, audit: Audit) {
  /** The platform (null: every platform, global actors only), checked for this actor. */
  async function scope(actor: AdminActor, platformId: string | null, what: string) {
    if (platformId === null) assertGlobal(actor, what);
    else await platforms.get(actor, platformId);
  }

  const unknownMail = (id: string) => new OAuthError('not_found', `unknown mail "${id}"`);

  /**
   * Requeues one mail (dead or waiting) or every dead one; returns the mails requeued. Unknown
   * (or another platform's) mail: not_found; a mail being sent or sent: conflict.
   */
  async function requeue(
    actor: AdminActor,
    platformId: string | null,
    select: MailRetrySelect,
  ): Promise<MailOutboxRow[]> {
    await scope(actor, platformId, 'retrying mail of every platform');
    return deps.db.transaction(async (trx) => {
      let mailPlatformId = platformId;
      if ('id' in select) {
        const row = isUuid(select.id) ? await outbox.findById(trx, select.id) : undefined;
        if (!row || (platformId !== null && row.platformId !== platformId)) throw unknownMail(select.id);
        if (row.status !== 'dead' && row.status !== 'queued')
          throw conflict(`mail ${row.id} is ${row.status}: only a dead or queued mail can be retried`);
        mailPlatformId = row.platformId;
      }
      const rows = await mailOutbox.retry(
        'id' in select ? select : { allDead: true, platformId: platformId ?? undefined },
        trx,
      );
      if (rows.length) {
        await audit.record(trx, actor, {
          kind: 'mail.retried',
          platformId: mailPlatformId,
          details: {
            requeued: rows.length,
            ...('id' in select ? {} : { all_dead: true }),
            mail_ids: rows.slice(0, 50).map((m) => m.id),
          },
        });
      }
      return rows;
    });
  }

  return {
    /** The console's view: the newest `limit` mails and the counts. */
    async list(actor: AdminActor, platformId: string, status: MailStatus | undefined, limit: number) {
      assertPlatformAccess(actor, platformId);
      return mailOutbox.list({ platformId, status }, limit);
    },

    /** Newest first, cursor-paged, with the counts per status. */
    async listPage(
      actor: AdminActor,
      platformId: string | null,
      query: { status?: MailStatus; limit: number; cursor?: string },
    ) {
      await scope(actor, platformId, "listing every platform's mail");
      const filter = { platformId: platformId ?? undefined, status: query.status };
      const [rows, counts] = await Promise.all([
        outbox.listPage(deps.db, filter, { before: decodeCursor(query.cursor), limit: query.limit + 1 }),
        mailOutbox.countByStatus(filter.platformId),
      ]);
      return { ...toPage(rows, query.limit, (m) => ({ at: m.createdAt, id: m.id })), counts };
    },

    requeue,

    /** The console's retry: how many mails were requeued. */
    async retry(actor: AdminActor, platformId: string, select: MailRetrySelect): Promise<number> {
      return (await requeue(actor, platformId, select)).length;
    },
  };
}

export type MailAdmin = ReturnType<typeof createMailAdmin>;
