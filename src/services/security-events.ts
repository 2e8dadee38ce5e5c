import type { Queryable } from '../db';
import type { AuditContext, AuditEventKind } from '../domain/audit';
import { createAudit } from './audit.service';
import type { Deps } from './deps';

/**
 * Where a user's security event happens: the request (built by the HTTP layer, see
 * src/http/request/audit-context.ts) and the platform, plus the client when an app is involved.
 */
export interface SecurityOrigin {
  ctx: AuditContext;
  platformId: string;
  clientId?: string | null;
}

/** The security half of the audit vocabulary; admin changes are recorded by the admin services. */
export type SecurityEventKind = Extract<
  AuditEventKind,
  | 'sign_in.succeeded'
  | 'sign_in.failed'
  | 'sign_in.locked_out'
  | 'sign_up'
  | 'email.verified'
  | 'password.reset_requested'
  | 'password.reset'
  | 'password.changed'
  | 'mfa.enrolled'
  | 'mfa.removed'
  | 'mfa.used'
  | 'consent.granted'
  | 'consent.revoked'
  | 'refresh_token.reuse_detected'
  | 'logout'
  | 'sign_out_everywhere'
  | 'identity.linked'
  | 'identity.unlinked'
>;

/**
 * Records security events: one INSERT each, in the transaction of the change when there is one
 * (`q`), else `deps.db`. The user is the actor: actorId is the subject once known (null for a
 * failed sign-in with an unknown email). Details never hold a secret.
 */
export function createSecurityEvents(deps: Deps) {
  const audit = createAudit(deps);
  const event = (
    origin: SecurityOrigin,
    kind: SecurityEventKind,
    subject: string | null,
    details: Record<string, unknown>,
  ) => ({
    ctx:
      origin.ctx.actorType === 'user' ? { ...origin.ctx, actorId: subject ?? origin.ctx.actorId ?? null } : origin.ctx,
    event: { kind, platformId: origin.platformId, subject, clientId: origin.clientId ?? null, details },
  });
  return {
    record(
      q: Queryable,
      origin: SecurityOrigin,
      kind: SecurityEventKind,
      subject: string | null,
      details: Record<string, unknown> = {},
    ): Promise<void> {
      const e = event(origin, kind, subject, details);
      return audit.record(q, e.ctx, e.event);
    },

    /**
     * A sign-in's success, committed asynchronously: what it leads to (the code, the token, the
     * signed-in page's next durable write) commits durably after it and so makes it durable too
     * (docs/decisions.md, "Durable commits per sign-in").
     */
    recordSignInStep(
      origin: SecurityOrigin,
      kind: SecurityEventKind,
      subject: string | null,
      details: Record<string, unknown> = {},
    ): Promise<void> {
      const e = event(origin, kind, subject, details);
      return audit.recordWithAsyncCommit(e.ctx, e.event);
    },
  };
}

export type SecurityEvents = ReturnType<typeof createSecurityEvents>;
