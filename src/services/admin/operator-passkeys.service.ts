import type {
  AuthenticationResponseJSON,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
} from '@simplewebauthn/server';
import { newId } from '../../crypto/random';
import { invalidRequest } from '../../errors';
import { isUuid } from '../../domain/ids';
import { PASSKEY_NAME_MAX } from '../../domain/passkey';
import type { AuditContext } from '../../domain/audit';
import type { Operator, OperatorPasskey } from '../../domain/operator';
import * as operators from '../../repositories/operator.repository';
import * as passkeys from '../../repositories/operator-passkey.repository';
import type { Deps } from '../deps';
import type { Audit } from '../audit.service';
import * as webauthn from '../mfa/webauthn';
import type { createOperatorThrottle } from './operator-throttle';
import { auditSignInFailure } from './operator-sign-in-audit';

export type OperatorPasskeyAdded = { ok: true; passkey: OperatorPasskey } | { ok: false; message: string };
export type OperatorPasskeyOutcome =
  { ok: true; passkey: OperatorPasskey } | { ok: false; message: string; lockedSeconds: number };

const NOT_CREATED = 'The passkey was not created. Try again.';
const FAILED = 'That passkey could not be verified. Try again.';

/**
 * Operators' passkeys: a second factor of the console next to or
 * instead of the authenticator app, on the users' WebAuthn calls (mfa/webauthn.ts) but in a table
 * of their own. An operator keeps at least one second factor: the last one cannot be removed, and
 * a passkey is added at sign-in only by an operator that has none yet. A sign-in's failures count
 * on the code throttle (per operator and source).
 */
export function createOperatorPasskeys(deps: Deps, audit: Audit, throttle: ReturnType<typeof createOperatorThrottle>) {
  const rp = webauthn.relyingPartyOf(deps.config.baseUrl);
  const requireRp = () => {
    if (!rp.isAvailable) throw invalidRequest('Passkeys need a host name: BASE_URL is an IP address');
  };
  const actorOf = (ctx: AuditContext, o: Operator) => ({ ...ctx, actorId: o.id, actorName: o.email });

  return {
    relyingParty: rp,

    list: (operatorId: string) => passkeys.listByOperator(deps.db, operatorId),
    count: (operatorId: string) => passkeys.countByOperator(deps.db, operatorId),

    /** Options for navigator.credentials.create under "Latchkey admin"; the operator's own passkeys excluded. */
    async registrationOptions(operator: Operator): Promise<PublicKeyCredentialCreationOptionsJSON> {
      requireRp();
      const existing = await passkeys.listByOperator(deps.db, operator.id);
      return webauthn.registrationOptions(rp, {
        rpName: 'Latchkey admin',
        userName: operator.email,
        userId: operator.id,
        displayName: operator.email,
        existing,
      });
    },

    /**
     * Verifies the browser's answer and stores the passkey (audited operator.passkey_added in the same
     * transaction). `firstFactor`: the sign-in's enrolment, refused once the operator has any second factor.
     */
    async register(
      ctx: AuditContext,
      operator: Operator,
      input: { name: string; credential: string; expectedChallenge: string; firstFactor: boolean },
    ): Promise<OperatorPasskeyAdded> {
      requireRp();
      const name = input.name.trim().replace(/\s+/g, ' ');
      if (!name) return { ok: false, message: 'Give the passkey a name.' };
      if (name.length > PASSKEY_NAME_MAX)
        return { ok: false, message: `A passkey's name has at most ${PASSKEY_NAME_MAX} characters.` };
      const info = await webauthn.verifyRegistration(rp, input.credential, input.expectedChallenge, (err) =>
        deps.logger.info({ err }, 'operator passkey registration refused'),
      );
      if (!info) return { ok: false, message: NOT_CREATED };
      const { isBackupEligible: _be, isBackedUp: _bs, aaguid: _a, ...credential } = info;
      const passkey = { id: newId(), operatorId: operator.id, ...credential, name };
      const at = deps.now();
      return deps.db.transaction(async (trx): Promise<OperatorPasskeyAdded> => {
        const row = await operators.findByIdForUpdate(trx, operator.id);
        if (!row || row.disabledAt) return { ok: false, message: NOT_CREATED };
        if (input.firstFactor && (row.hasTotp || (await passkeys.countByOperator(trx, row.id)) > 0))
          return { ok: false, message: 'Sign in with your second factor first.' };
        if (!(await passkeys.insert(trx, passkey, at)))
          return { ok: false, message: 'This passkey is already registered.' };
        await audit.record(trx, actorOf(ctx, row), {
          kind: 'operator.passkey_added',
          platformId: row.platformId,
          details: { email: row.email, passkey_id: passkey.id, name },
        });
        return { ok: true, passkey: { ...passkey, createdAt: at, lastUsedAt: null } };
      });
    },

    /** Options for navigator.credentials.get: the operator's passkeys, verification preferred (a second factor). */
    async authenticationOptions(operatorId: string): Promise<PublicKeyCredentialRequestOptionsJSON> {
      requireRp();
      return webauthn.authenticationOptions(rp, await passkeys.listByOperator(deps.db, operatorId), 'preferred');
    },

    /**
     * The second factor with a passkey: it must be this operator's, signed over the challenge, its
     * counter above the stored one (a cloned authenticator or a replayed answer is refused); the
     * counter and last use are updated in the same transaction. Throttled; a failure is audited.
     */
    async authenticate(
      ctx: AuditContext,
      operator: Operator,
      input: { credential: string; expectedChallenge: string },
      source: string,
    ): Promise<OperatorPasskeyOutcome> {
      requireRp();
      const locked = await throttle.codeLocked(operator, source);
      if (locked) return { ok: false, message: 'Too many attempts.', lockedSeconds: locked };
      const response = webauthn.parseCredential<AuthenticationResponseJSON>(input.credential);
      const result = !response
        ? ({ reason: 'malformed' } as const)
        : await deps.db.transaction(async (trx): Promise<{ passkey: OperatorPasskey } | { reason: string }> => {
            const passkey = await passkeys.findByCredentialIdForUpdate(trx, response.id);
            if (!passkey || passkey.operatorId !== operator.id) return { reason: 'unknown_passkey' } as const;
            let verified;
            try {
              verified = await webauthn.verifyAssertion(rp, response, passkey, input.expectedChallenge, false);
            } catch (err) {
              deps.logger.info({ err: (err as Error).message, passkey: passkey.id }, 'operator passkey refused');
              return { reason: /counter/i.test((err as Error).message) ? 'counter' : 'invalid' } as const;
            }
            if (!verified) return { reason: 'invalid' } as const;
            await passkeys.markUsed(trx, passkey.id, verified.newCounter, deps.now());
            return { passkey: { ...passkey, counter: verified.newCounter } };
          });
      if ('passkey' in result) {
        await throttle.codeOk(operator, source);
        return { ok: true, passkey: result.passkey };
      }
      const { reason } = result;
      const failure = await throttle.codeFailed(operator, source);
      await auditSignInFailure(deps, audit, ctx, operator, { factor: 'passkey', reason }, failure);
      return {
        ok: false,
        message: reason === 'unknown_passkey' ? 'This passkey is not registered for your operator account.' : FAILED,
        lockedSeconds: failure.lockedSeconds,
      };
    },

    /**
     * Removes one of the operator's passkeys (audited operator.passkey_removed). Throws invalid_request
     * for the last second factor (no app, no other passkey) and not_found for a passkey not theirs.
     */
    async remove(ctx: AuditContext, operator: Operator, passkeyId: string): Promise<OperatorPasskey> {
      return deps.db.transaction(async (trx) => {
        const row = await operators.findByIdForUpdate(trx, operator.id);
        const all = row ? await passkeys.listByOperator(trx, row.id) : [];
        const passkey = isUuid(passkeyId) ? all.find((p) => p.id === passkeyId) : undefined;
        if (!row || !passkey) throw invalidRequest('That passkey was already removed.');
        if (!row.hasTotp && all.length === 1)
          throw invalidRequest(
            'This passkey is your only second factor: add another passkey or set up an authenticator app before removing it.',
          );
        await passkeys.remove(trx, row.id, passkey.id);
        await audit.record(trx, actorOf(ctx, row), {
          kind: 'operator.passkey_removed',
          platformId: row.platformId,
          details: { email: row.email, passkey_id: passkey.id, name: passkey.name },
        });
        return passkey;
      });
    },
  };
}

export type OperatorPasskeys = ReturnType<typeof createOperatorPasskeys>;
