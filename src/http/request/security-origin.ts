import type { Request } from 'express';
import type { SecurityOrigin } from '../../services/security-events';
import { auditContext } from './audit-context';

/** A user's request as the origin of the security events it causes; the services fill in who. */
export function securityOrigin(req: Request, platformId: string, clientId?: string | null): SecurityOrigin {
  return { ctx: auditContext(req, { type: 'user' }), platformId, clientId: clientId ?? null };
}
