import { Router, type Request, type Response } from 'express';
import type { Services } from '../../../services';
import { MAIL_STATUSES, type MailStatus } from '../../../domain/mail';
import { presentMail } from '../../../presenters/mail.presenter';
import { field, queryParam, submitForm } from './forms';
import { operatorActor } from './operator';
import { renderConsole } from './render';

const LIMIT = 100;

/** A platform's mail outbox: counts per status, the newest mails (filter by status), retry one or every dead mail. */
export function consoleMailRouter(s: Services): Router {
  const r = Router();
  const base = (req: Request) => `/admin/platforms/${req.params.platformId}/mail`;

  async function show(req: Request, res: Response, error: string | null = null, status = 200) {
    const wanted = queryParam(req, 'status');
    const filter = (MAIL_STATUSES as readonly string[]).includes(wanted) ? (wanted as MailStatus) : undefined;
    const { mails, counts } = await s.mailAdmin.list(
      operatorActor(req, res),
      String(req.params.platformId),
      filter,
      LIMIT,
    );
    renderConsole(
      req,
      res,
      'mail',
      {
        title: 'Mail',
        mails: mails.map(presentMail),
        counts,
        statuses: MAIL_STATUSES,
        status: filter ?? '',
        limit: LIMIT,
        action: base(req),
        error,
      },
      status,
    );
  }

  r.get('/admin/platforms/:platformId/mail', (req, res) => show(req, res));

  r.post('/admin/platforms/:platformId/mail/retry', (req, res) =>
    submitForm(
      req,
      res,
      async () => {
        const id = field(req, 'id');
        const n = await s.mailAdmin.retry(
          operatorActor(req, res),
          String(req.params.platformId),
          id ? { id } : { allDead: true },
        );
        return {
          message: id
            ? 'The mail is queued again.'
            : n
              ? `${n} dead ${n === 1 ? 'mail is' : 'mails are'} queued again.`
              : 'No dead mail to retry.',
          to: base(req),
        };
      },
      (error, status) => show(req, res, error, status),
    ),
  );

  return r;
}
