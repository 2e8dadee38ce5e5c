import type { Router } from 'express';
import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import type { Services } from '../../../services';
import { PlatformParams } from '../../../wire/admin/common.schemas';
import { AuditAllQuery, AuditEventPage, AuditQuery } from '../../../wire/admin/audit.schemas';
import { presentAuditEvent } from '../../../presenters/admin/audit-event.presenter';
import { addOperation } from './admin-route';

/** The audit log: filters and cursor paging, newest first. */
export function auditRoutes(router: Router, registry: OpenAPIRegistry, s: Services) {
  const tag = 'Audit events';
  const page = (p: Awaited<ReturnType<Services['admin']['audit']['list']>>) => ({
    items: p.items.map(presentAuditEvent),
    next_cursor: p.nextCursor,
  });
  addOperation(router, registry, {
    method: 'get',
    path: '/audit-events',
    operationId: 'listAuditEvents',
    tag,
    summary: 'Audit events of every platform and of none, newest first (global tokens)',
    query: AuditAllQuery,
    status: 200,
    response: AuditEventPage,
    responseDescription: 'A page of events',
    errors: [403],
    handler: async ({ query, actor }) => page(await s.admin.audit.list(actor, null, query)),
  });
  addOperation(router, registry, {
    method: 'get',
    path: '/platforms/:platform_guid/audit-events',
    operationId: 'listPlatformAuditEvents',
    tag,
    summary: "The platform's audit events, newest first",
    params: PlatformParams,
    query: AuditQuery,
    status: 200,
    response: AuditEventPage,
    responseDescription: 'A page of events',
    errors: [404],
    handler: async ({ params, query, actor }) => page(await s.admin.audit.list(actor, params.platform_guid, query)),
  });
}
