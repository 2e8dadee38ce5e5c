import { isUuid } from '../../domain/ids';
import type { AdminActor } from '../../domain/admin';
import { invalidRequest } from '../../errors';
import * as outbox from '../../repositories/mail-outbox.repository';
import type { MailStatus } from '../../repositories/mail-outbox.repository';
import type { Deps } from '../deps';
import type { Audit } from '../audit.service';
import type { MailOutbox } from '../mail-outbox.service';
import { assertPlatformAccess } from './access';

export { MAIL_STATUSES, type MailStatus } from '../../repositories/mail-outbox.repository';

/** A platform's mail outbox as operators manage it (console): list with counts, retry one or every dead mail; audited. */
export function createMailAdmin(deps: Deps, mailOutbox: MailOutbox, audit: Audit) {
  return {
    async list(actor: AdminActor, platformId: string, status: MailStatus | undefined, limit: number) {
      assertPlatformAccess(actor, platformId);
      return mailOutbox.list({ platformId, status }, limit);
    },

    /** Requeues one mail of the platform (dead or waiting) or all its dead ones; returns how many. Throws invalid_request. */
    async retry(actor: AdminActor, platformId: string, select: { id: string } | { allDead: true }): Promise<number> {
      assertPlatformAccess(actor, platformId);
      if ('id' in select) {
        // Another platform's mail is as unknown as a missing one.
        const row = isUuid(select.id) ? await outbox.findById(deps.db, select.id) : undefined;
        if (!row || row.platformId !== platformId) throw invalidRequest(`unknown mail "${select.id}"`);
      }
      const rows = await mailOutbox.retry('id' in select ? select : { allDead: true, platformId });
      if (rows.length) {
        await audit.record(deps.db, actor, { kind: 'mail.retried', platformId, details: { requeued: rows.length, mail_ids: rows.slice(0, 50).map((m) => m.id) } });
      }
      return rows.length;
    },
  };
}

export type MailAdmin = ReturnType<typeof createMailAdmin>;
