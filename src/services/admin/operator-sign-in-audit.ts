import type { AuditContext } from '../../domain/audit';
import type { Audit } from '../audit.service';
import type { Deps } from '../deps';
import type { OperatorFailure } from './operator-throttle';

/** The operator a failed step names: unknown for a password typed against an unknown email. */
export interface FailedOperator {
  id: string | null;
  email: string;
  platformId: string | null;
}

/**
 * A failed console sign-in step in the audit log, in one transaction: `operator.sign_in_failed`
 * (factor, reason, whether a lock is in force now), and one `operator.locked_out` per lock this
 * failure started, naming it — `account` (every source), `account_source` or `source` — with its
 * length. Never the password or code.
 */
export async function auditSignInFailure(
  deps: Deps,
  audit: Audit,
  ctx: AuditContext,
  who: FailedOperator,
  step: { factor: 'password' | 'totp' | 'passkey'; reason?: string },
  failure: OperatorFailure,
): Promise<void> {
  const actor = { ...ctx, actorId: who.id, actorName: who.email };
  await deps.db.transaction(async (trx) => {
    await audit.record(trx, actor, {
      kind: 'operator.sign_in_failed',
      platformId: who.platformId,
      details: { email: who.email, ...step, locked: failure.lockedSeconds > 0 },
    });
    for (const throttle of failure.started) {
      await audit.record(trx, actor, {
        kind: 'operator.locked_out',
        platformId: who.platformId,
        details: { email: who.email, factor: step.factor, throttle, locked_seconds: failure.lockedSeconds },
      });
    }
  });
}
