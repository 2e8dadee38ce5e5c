import { dummyPasswordHash, hashPassword, verifyPassword } from '../../crypto/passwords';
import { newId, randomToken } from '../../crypto/random';
import { invalidRequest, OAuthError } from '../../errors';
import { isUuid } from '../../domain/ids';
import { normalizeEmail } from '../../domain/user';
import type { AdminActor } from '../../domain/admin';
import type { AuditContext } from '../../domain/audit';
import type { Operator } from '../../domain/operator';
import * as operators from '../../repositories/operator.repository';
import type { OperatorRow } from '../../repositories/operator.repository';
import type { Deps } from '../deps';
import type { Audit } from '../audit.service';
import type { Platforms } from '../platforms.service';
import { matchTotpStep, newTotpEnrolment, totpUri, type TotpEnrolment } from '../mfa/totp.service';
import { assertGlobal } from './access';
import { createOperatorThrottle } from './operator-throttle';
import { auditSignInFailure } from './operator-sign-in-audit';
import { createOperatorPasskeys } from './operator-passkeys.service';
import { countByOperator, removeAll as removeAllPasskeys } from '../../repositories/operator-passkey.repository';

/** The authenticator app's account name reads "Latchkey admin: <email>". */
const TOTP_ISSUER = 'Latchkey admin';
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export type OperatorPasswordOutcome = { ok: true; operator: Operator } | { ok: false; lockedSeconds: number };
export type AccountTotpSetup = TotpEnrolment & { sealed: string };
export type OperatorCodeOutcome =
  { ok: true } | { ok: false; lockedSeconds: number; reason: 'invalid' | 'replayed' | 'locked' };

const publicView = ({
  passwordHash: _h,
  sealedTotpSecret: _s,
  totpConfirmedAt: _c,
  ...operator
}: OperatorRow): Operator => operator;

/**
 * Console operators: created by the CLI, signed in with an argon2id password and then
 * a TOTP code, always (an operator without an app enrols one before seeing anything). Password
 * and code guesses are throttled per email/operator and source, per source, and per account.
 */
export function createOperators(deps: Deps, platforms: Platforms, audit: Audit) {
  const throttle = createOperatorThrottle(deps);
  const unseal = (row: OperatorRow) => deps.sealer.unseal(row.sealedTotpSecret!).toString('utf8');
  const live = async (id: string) => {
    const row = isUuid(id) ? await operators.findById(deps.db, id) : undefined;
    return row && !row.disabledAt ? row : undefined;
  };

  const passkeys = createOperatorPasskeys(deps, audit, throttle);
  const shownTotp = (operator: Operator, sealed: string): TotpEnrolment | undefined => {
    try {
      const secret = deps.sealer.unseal(sealed).toString('utf8');
      return { secret, uri: totpUri(TOTP_ISSUER, operator.email, secret) };
    } catch {
      return undefined;
    }
  };

  return {
    /** The operator's passkeys: a second factor next to or instead of the app (operator-passkeys.service.ts). */
    passkeys,

    /** A new operator; without a password a strong one is generated (returned once). Throws invalid_request. */
    async create(actor: AdminActor, input: { email: string; platformId: string | null; password?: string }) {
      assertGlobal(actor, 'creating an operator');
      const email = normalizeEmail(input.email);
      if (!EMAIL.test(email) || email.length > 254) throw invalidRequest('email must be an email address');
      const minLength = Math.max(deps.config.passwordMinLength, 12);
      const password = input.password ?? randomToken(18);
      if (password.length < minLength || password.length > 256)
        throw invalidRequest(`password must be ${minLength} to 256 characters`);
      if (input.platformId !== null) await platforms.requirePlatform(input.platformId);
      const passwordHash = await hashPassword(password, deps.config.argon2);
      const row = await deps.db.transaction(async (trx) => {
        const created = await operators.insert(trx, { id: newId(), email, passwordHash, platformId: input.platformId });
        if (!created) throw invalidRequest(`an operator with email "${email}" exists`);
        await audit.record(trx, actor, {
          kind: 'operator.created',
          platformId: input.platformId,
          details: { operator_id: created.id, email },
        });
        return created;
      });
      return { operator: publicView(row), password: input.password === undefined ? password : null };
    },

    /** The operators the actor may see (a platform actor: its platform's). */
    list: async (actor: AdminActor): Promise<Operator[]> =>
      (await operators.list(deps.db, actor.platformId ?? undefined)).map(publicView),

    /** Disables an operator by email; its console session ends at its next request. Throws not_found. */
    async disable(actor: AdminActor, email: string): Promise<Operator> {
      assertGlobal(actor, 'disabling an operator');
      const row = await operators.findByEmail(deps.db, normalizeEmail(email));
      if (!row) throw new OAuthError('not_found', `unknown operator "${email}"`);
      await deps.db.transaction(async (trx) => {
        if (await operators.disable(trx, row.id, deps.now())) {
          await audit.record(trx, actor, {
            kind: 'operator.disabled',
            platformId: row.platformId,
            details: { operator_id: row.id, email: row.email },
          });
        }
      });
      return publicView((await operators.findById(deps.db, row.id))!);
    },

    /** Enables a disabled operator again (audited operator.enabled); its factors are as they were. Throws not_found. */
    async enable(actor: AdminActor, email: string): Promise<Operator> {
      assertGlobal(actor, 'enabling an operator');
      const row = await operators.findByEmail(deps.db, normalizeEmail(email));
      if (!row) throw new OAuthError('not_found', `unknown operator "${email}"`);
      await deps.db.transaction(async (trx) => {
        if (await operators.enable(trx, row.id)) {
          await audit.record(trx, actor, {
            kind: 'operator.enabled',
            platformId: row.platformId,
            details: { operator_id: row.id, email: row.email },
          });
        }
      });
      return publicView((await operators.findById(deps.db, row.id))!);
    },

    /**
     * Clears the sign-in locks and counts of one operator account over every source (after an
     * attack on it, or a forgotten password typed too often), audited operator.unlocked with how many
     * went. A source's own lock over every email (spraying) stays. Throws not_found.
     */
    async unlock(actor: AdminActor, email: string): Promise<{ operator: Operator; cleared: number }> {
      assertGlobal(actor, 'unlocking an operator');
      const row = await operators.findByEmail(deps.db, normalizeEmail(email));
      if (!row) throw new OAuthError('not_found', `unknown operator "${email}"`);
      const cleared = await deps.db.transaction(async (trx) => {
        const keys = await throttle.clearAccount(trx, row);
        if (keys.length)
          await audit.record(trx, actor, {
            kind: 'operator.unlocked',
            platformId: row.platformId,
            details: { operator_id: row.id, email: row.email, cleared: keys.length },
          });
        return keys.length;
      });
      return { operator: publicView(row), cleared };
    },

    /**
     * A lost device: removes the operator's app (confirmed or pending) and every passkey, and deletes
     * its console sessions, so the next sign-in asks for a new second factor after the password.
     * Audited operator.mfa_reset (what was removed, never a secret). Throws not_found.
     */
    async resetMfa(
      actor: AdminActor,
      email: string,
    ): Promise<{ operator: Operator; totpRemoved: boolean; passkeysRemoved: number; sessionsEnded: number }> {
      assertGlobal(actor, "resetting an operator's second factors");
      const found = await operators.findByEmail(deps.db, normalizeEmail(email));
      if (!found) throw new OAuthError('not_found', `unknown operator "${email}"`);
      return deps.db.transaction(async (trx) => {
        const row = (await operators.findByIdForUpdate(trx, found.id))!;
        const passkeysRemoved = await removeAllPasskeys(trx, row.id);
        await operators.clearTotp(trx, row.id);
        const sessionsEnded = await operators.endConsoleSessions(trx, row.id);
        const details = {
          operator_id: row.id,
          email: row.email,
          totp_removed: row.hasTotp,
          passkeys_removed: passkeysRemoved,
          sessions_ended: sessionsEnded,
        };
        await audit.record(trx, actor, { kind: 'operator.mfa_reset', platformId: row.platformId, details });
        return {
          operator: publicView((await operators.findById(trx, row.id))!),
          totpRemoved: row.hasTotp,
          passkeysRemoved,
          sessionsEnded,
        };
      });
    },

    /**
     * "Your account": a new app secret for a signed-in operator without one (it signed in with a
     * passkey, proof enough). Sealed for the console session, not stored yet: a pending secret
     * someone saw at sign-in before the passkey was added is never the one confirmed.
     */
    accountTotpSetup(operator: Operator): AccountTotpSetup {
      const enrolment = newTotpEnrolment(TOTP_ISSUER, operator.email);
      return { ...enrolment, sealed: deps.sealer.seal(enrolment.secret) };
    },

    /** The setup's secret again (a reload shows the same QR code); undefined if it does not unseal. */
    accountTotpShown: shownTotp,

    /** Confirms the "Your account" setup with a first code (audited operator.totp_added). Throws invalid_request. */
    async confirmAccountTotp(ctx: AuditContext, operator: Operator, sealed: string, code: string): Promise<void> {
      const shown = shownTotp(operator, sealed);
      if (!shown) throw invalidRequest('This setup has expired. Start again.');
      const step = matchTotpStep(shown.secret, code, deps.now());
      if (step === undefined) throw invalidRequest('That code is not right. Try again.');
      await deps.db.transaction(async (trx) => {
        const row = await operators.findByIdForUpdate(trx, operator.id);
        if (!row || row.disabledAt || !(await operators.setConfirmedTotp(trx, row.id, sealed, step, deps.now())))
          throw invalidRequest('An authenticator app is already set up.');
        await audit.record(
          trx,
          { ...ctx, actorId: row.id, actorName: row.email },
          { kind: 'operator.totp_added', platformId: row.platformId, details: { email: row.email } },
        );
      });
    },

    /** Removes the app of an operator that keeps a passkey (audited operator.totp_removed). Throws invalid_request. */
    async removeTotp(ctx: AuditContext, operator: Operator): Promise<void> {
      await deps.db.transaction(async (trx) => {
        const row = await operators.findByIdForUpdate(trx, operator.id);
        if (!row?.hasTotp) throw invalidRequest('No authenticator app is set up.');
        if ((await countByOperator(trx, row.id)) === 0)
          throw invalidRequest('The authenticator app is your only second factor: add a passkey before removing it.');
        await operators.clearTotp(trx, row.id);
        await audit.record(
          trx,
          { ...ctx, actorId: row.id, actorName: row.email },
          { kind: 'operator.totp_removed', platformId: row.platformId, details: { email: row.email } },
        );
      });
    },

    /** A signed-in operator that is still enabled (checked on every console request). */
    findActive: async (id: string): Promise<Operator | undefined> => {
      const row = await live(id);
      return row && publicView(row);
    },

    /** The first factor: the password, unless this email+source, this source or this account is locked. A failure is audited (and a lock it starts). */
    async verifyPassword(
      ctx: AuditContext,
      emailInput: string,
      password: string,
      source: string,
    ): Promise<OperatorPasswordOutcome> {
      const email = normalizeEmail(emailInput).slice(0, 254);
      const locked = await throttle.passwordLocked(email, source);
      if (locked) return { ok: false, lockedSeconds: locked };
      const row = await operators.findByEmail(deps.db, email);
      // Verify against a dummy hash for unknown emails, so timing does not tell them apart.
      const ok = await verifyPassword(row?.passwordHash ?? (await dummyPasswordHash(deps.config.argon2)), password);
      if (row && ok && !row.disabledAt) {
        await throttle.passwordOk(email, source);
        return { ok: true, operator: publicView(row) };
      }
      const failure = await throttle.passwordFailed(email, source);
      await auditSignInFailure(
        deps,
        audit,
        ctx,
        { id: row?.id ?? null, email, platformId: row?.platformId ?? null },
        { factor: 'password' },
        failure,
      );
      return { ok: false, lockedSeconds: failure.lockedSeconds };
    },

    /**
     * The app's enrolment for an operator without a second factor. `shownSealed` is the pending
     * secret this sign-in already showed: while it is still the pending one it is shown again (a
     * reload, a wrong code). Otherwise a new secret replaces any pending one, so a secret shown to
     * an earlier sign-in (someone else who had the password, perhaps) is never shown again and no
     * longer confirms.
     */
    async totpEnrolment(operatorId: string, shownSealed?: string): Promise<AccountTotpSetup | undefined> {
      const row = await live(operatorId);
      // An operator with a passkey signs in with it: the sign-in is no way to add an app past it.
      if (!row || row.hasTotp || (await countByOperator(deps.db, row.id)) > 0) return undefined;
      if (row.sealedTotpSecret && row.sealedTotpSecret === shownSealed)
        return { secret: unseal(row), uri: totpUri(TOTP_ISSUER, row.email, unseal(row)), sealed: row.sealedTotpSecret };
      const enrolment = newTotpEnrolment(TOTP_ISSUER, row.email);
      const sealed = deps.sealer.seal(enrolment.secret);
      return (await operators.setPendingTotp(deps.db, row.id, sealed)) ? { ...enrolment, sealed } : undefined;
    },

    /**
     * The second factor: a code of the confirmed app (its step used up: no replay), or the first
     * code of the pending enrolment, which confirms it. Throttled per operator and source; audited.
     */
    async verifyCode(
      ctx: AuditContext,
      operatorId: string,
      code: string,
      source: string,
    ): Promise<OperatorCodeOutcome> {
      const row = await live(operatorId);
      if (!row?.sealedTotpSecret) return { ok: false, lockedSeconds: 0, reason: 'invalid' };
      // A pending app confirms only for an operator without any second factor (not past a passkey).
      if (!row.hasTotp && (await countByOperator(deps.db, row.id)) > 0)
        return { ok: false, lockedSeconds: 0, reason: 'invalid' };
      const locked = await throttle.codeLocked(row, source);
      if (locked) return { ok: false, lockedSeconds: locked, reason: 'locked' };
      const step = matchTotpStep(unseal(row), code, deps.now());
      const claimed =
        step !== undefined &&
        (row.hasTotp
          ? await operators.claimTotpStep(deps.db, row.id, step)
          : await operators.confirmTotp(deps.db, row.id, row.sealedTotpSecret, step, deps.now()));
      if (claimed) {
        await throttle.codeOk(row, source);
        return { ok: true };
      }
      const reason = step === undefined ? 'invalid' : 'replayed';
      const failure = await throttle.codeFailed(row, source);
      await auditSignInFailure(deps, audit, ctx, row, { factor: 'totp', reason }, failure);
      return { ok: false, lockedSeconds: failure.lockedSeconds, reason };
    },

    /** Both factors passed: the sign-in counts (last_sign_in_at, audit operator.signed_in with the second factor used). */
    async signedIn(
      ctx: AuditContext,
      operator: Operator,
      enrolled: boolean,
      secondFactor: 'totp' | 'passkey' = 'totp',
    ): Promise<void> {
      const enrolment = secondFactor === 'totp' ? { totp_enrolled: enrolled } : { passkey_enrolled: enrolled };
      await deps.db.transaction(async (trx) => {
        await operators.markSignedIn(trx, operator.id, deps.now());
        await audit.record(
          trx,
          { ...ctx, actorId: operator.id, actorName: operator.email },
          {
            kind: 'operator.signed_in',
            platformId: operator.platformId,
            details: { email: operator.email, second_factor: secondFactor, ...enrolment },
          },
        );
      });
    },
  };
}

export type Operators = ReturnType<typeof createOperators>;
