import type { z } from 'zod';
import type { AuditEvent as AuditEventWire } from '../../wire/admin/audit.schemas';
import type { AuditEvent } from '../../domain/audit';

export function presentAuditEvent(e: AuditEvent): z.infer<typeof AuditEventWire> {
  return {
    id: e.id,
    occurred_at: e.occurredAt.toISOString(),
    kind: e.kind,
    actor_type: e.actorType,
    actor_id: e.actorId,
    actor_name: e.actorName,
    platform_guid: e.platformId,
    subject: e.subject,
    client_id: e.clientId,
    source: e.source,
    user_agent: e.userAgent,
    request_id: e.requestId,
    details: e.details,
  };
}
