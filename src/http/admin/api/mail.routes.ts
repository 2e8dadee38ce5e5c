import type { Router } from 'express';
import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import type { Services } from '../../../services';
import { PlatformParams } from '../../../wire/admin/common.schemas';
import { MailAllQuery, MailPage, MailParams, MailQuery, MailRetried } from '../../../wire/admin/mail.schemas';
import { presentMail } from '../../../presenters/mail.presenter';
import { addOperation } from './admin-route';

/** The mails listed in a retry's answer (the count is exact; the list is for reading). */
const LISTED = 200;

/** The mail outbox: a platform's (or, for global tokens, every platform's) mails, never a body; retry. */
export function mailRoutes(router: Router, registry: OpenAPIRegistry, s: Services) {
  const tag = 'Mail outbox';
  const page = (p: Awaited<ReturnType<Services['admin']['mail']['listPage']>>) => ({
    items: p.items.map(presentMail),
    next_cursor: p.nextCursor,
    counts: p.counts,
  });
  const retried = (rows: Awaited<ReturnType<Services['admin']['mail']['requeue']>>) => ({
    requeued: rows.length,
    mails: rows.slice(0, LISTED).map(presentMail),
  });

  addOperation(router, registry, {
    method: 'get',
    path: '/mail',
    operationId: 'listAllMail',
    tag,
    summary: "Every platform's outbox, newest first, with counts per status (global tokens)",
    query: MailAllQuery,
    status: 200,
    response: MailPage,
    responseDescription: 'A page of mails',
    errors: [403],
    handler: async ({ query, actor }) => page(await s.admin.mail.listPage(actor, query.platform_guid ?? null, query)),
  });
  addOperation(router, registry, {
    method: 'get',
    path: '/platforms/:platform_guid/mail',
    operationId: 'listMail',
    tag,
    summary: "The platform's outbox, newest first, with counts per status",
    params: PlatformParams,
    query: MailQuery,
    status: 200,
    response: MailPage,
    responseDescription: 'A page of mails',
    errors: [404],
    handler: async ({ params, query, actor }) => page(await s.admin.mail.listPage(actor, params.platform_guid, query)),
  });
  addOperation(router, registry, {
    method: 'post',
    path: '/platforms/:platform_guid/mail/retry-dead',
    operationId: 'retryDeadMail',
    tag,
    summary: 'Queue every dead mail of the platform again',
    params: PlatformParams,
    status: 200,
    response: MailRetried,
    responseDescription: 'The mails queued again',
    errors: [404],
    handler: async ({ params, actor }) =>
      retried(await s.admin.mail.requeue(actor, params.platform_guid, { allDead: true })),
  });
  addOperation(router, registry, {
    method: 'post',
    path: '/platforms/:platform_guid/mail/:mail_id/retry',
    operationId: 'retryMail',
    tag,
    summary: 'Queue a dead mail again (a queued one is made due now)',
    description: 'A mail being sent or already sent cannot be retried (409): a sent mail keeps no body.',
    params: MailParams,
    status: 200,
    response: MailRetried,
    responseDescription: 'The mail queued again',
    errors: [404, 409],
    handler: async ({ params, actor }) =>
      retried(await s.admin.mail.requeue(actor, params.platform_guid, { id: params.mail_id })),
  });
}
