import type { Request } from 'express';
import type { AuditActorType, AuditContext } from '../../domain/audit';

/**
 * Where a request comes from, for the audit log: the client address as TRUST_PROXY
 * resolves it (never a raw X-Forwarded-For), the user agent and the request id the logs carry.
 */
export function auditContext(
  req: Request,
  actor: { type: AuditActorType; id?: string | null; name?: string | null },
): AuditContext {
  const userAgent = req.get('user-agent');
  return {
    actorType: actor.type,
    actorId: actor.id ?? null,
    actorName: actor.name ?? null,
    // An IPv4 client on a dual-stack socket arrives as ::ffff:a.b.c.d: record the address people read.
    source: req.ip?.replace(/^::ffff:(\d+\.\d+\.\d+\.\d+)$/, '$1') ?? null,
    userAgent: userAgent ? userAgent.slice(0, 512) : null,
    requestId: typeof req.id === 'string' ? req.id : req.id != null ? String(req.id) : null,
  };
}
