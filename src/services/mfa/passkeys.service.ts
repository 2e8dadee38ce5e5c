import type {
  AuthenticationResponseJSON,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
} from '@simplewebauthn/server';
import type { Queryable } from '../../db';
import type { Deps } from '../deps';
import { newId } from '../../crypto/random';
import { invalidRequest } from '../../errors';
import { isUuid } from '../../domain/ids';
import { PASSKEY_NAME_MAX, passkeyAmr, type Passkey } from '../../domain/passkey';
import * as credentials from '../../repositories/webauthn-credential.repository';
import * as users from '../../repositories/user.repository';
import { normalizeEmail } from '../../domain/user';
import { createSecurityEvents, type SecurityOrigin } from '../security-events';
import * as webauthn from './webauthn';
import { parseCredential, relyingPartyOf } from './webauthn';

export { relyingPartyOf, CHALLENGE_TTL_SECONDS, type RelyingParty } from './webauthn';

type Account = { id: string; email: string; givenName?: string; familyName?: string };
type Tenant = { id: string; name: string };
export type SignedInUser = Omit<users.UserRow, 'passwordHash'>;

export type RegisterResult = { ok: true; passkey: Passkey } | { ok: false; message: string };
export type AuthenticateResult =
  | { ok: true; user: SignedInUser; passkey: Passkey; userVerified: boolean; amr: string[] }
  | { ok: false; message: string };

/** Messages are catalog keys (locales/<lng>/security.json); the page translates them. */
const FAILED = 'security:passkeys.errors.failed';

/** Passkeys: register several per account, list, remove; sign in with one alone or after a password. */
export function createPasskeys(deps: Deps) {
  const rp = relyingPartyOf(deps.config.baseUrl);
  const events = createSecurityEvents(deps);
  const requireRp = () => {
    if (!rp.isAvailable) throw invalidRequest('Passkeys need a host name: BASE_URL is an IP address');
  };

  return {
    relyingParty: rp,

    list: (platformId: string, userId: string) => credentials.listByUser(deps.db, platformId, userId),
    count: (platformId: string, userId: string) => credentials.countByUser(deps.db, platformId, userId),

    /** Options for navigator.credentials.create: a discoverable credential, the user's own passkeys excluded. Throws invalid_request on an IP BASE_URL. */
    async registrationOptions(platform: Tenant, user: Account): Promise<PublicKeyCredentialCreationOptionsJSON> {
      requireRp();
      const existing = await credentials.listByUser(deps.db, platform.id, user.id);
      const displayName = [user.givenName, user.familyName].filter(Boolean).join(' ');
      return webauthn.registrationOptions(rp, {
        rpName: platform.name,
        userName: user.email,
        userId: user.id,
        displayName: displayName || user.email,
        existing,
      });
    },

    /** Verifies the browser's answer to registrationOptions and stores the passkey under `name`; with `origin`, mfa.enrolled in the same transaction. */
    async register(
      platform: Tenant,
      user: Account,
      input: { name: string; credential: string; expectedChallenge: string },
      origin?: SecurityOrigin,
    ): Promise<RegisterResult> {
      requireRp();
      const name = input.name.trim().replace(/\s+/g, ' ');
      if (!name) return { ok: false, message: 'security:passkeys.errors.noName' };
      if (name.length > PASSKEY_NAME_MAX) return { ok: false, message: 'security:passkeys.errors.nameTooLong' };
      const info = await webauthn.verifyRegistration(rp, input.credential, input.expectedChallenge, (err) =>
        deps.logger.info({ err }, 'passkey registration refused'),
      );
      if (!info) return { ok: false, message: 'security:passkeys.errors.notCreated' };
      const passkey: credentials.NewPasskey = { id: newId(), platformId: platform.id, userId: user.id, ...info, name };
      const at = deps.now();
      const stored = await deps.db.transaction(async (trx) => {
        if (!(await credentials.insert(trx, passkey, at))) return false;
        if (origin)
          await events.record(trx, origin, 'mfa.enrolled', user.id, {
            factor: 'passkey',
            passkey_id: passkey.id,
            name,
          });
        return true;
      });
      if (!stored) return { ok: false, message: 'security:passkeys.errors.alreadyRegistered' };
      return { ok: true, passkey: { ...passkey, createdAt: at, lastUsedAt: null } };
    },

    /**
     * Options for navigator.credentials.get. Passwordless (no user): any discoverable passkey of
     * this RP, user verification required. Second factor: the user's passkeys, verification preferred.
     */
    async authenticationOptions(
      platform: Tenant,
      forUser?: { id: string },
    ): Promise<PublicKeyCredentialRequestOptionsJSON> {
      requireRp();
      const allow = forUser ? await credentials.listByUser(deps.db, platform.id, forUser.id) : [];
      return webauthn.authenticationOptions(rp, allow, forUser ? 'preferred' : 'required');
    },

    /**
     * Verifies a sign-in assertion: the credential must be registered on this platform (and be
     * `forUser`'s for a second factor, `onlyEmail`'s for a pinned sign-in); a passwordless sign-in needs user verification.
     * The counter and last use are updated in the same transaction as the check. With `origin`,
     * the outcome is audited in that transaction: sign_in.succeeded (passwordless), mfa.used (a
     * second factor) or sign_in.failed. `purpose: 'confirm'` (with `forUser`): a proof that the account
     * is theirs (linking an upstream identity), audited as sign_in.succeeded/failed with that purpose.
     */
    async authenticate(
      platform: Tenant,
      input: {
        credential: string;
        expectedChallenge: string;
        forUser?: { id: string };
        onlyEmail?: string;
        purpose?: 'confirm';
      },
      origin?: SecurityOrigin,
    ): Promise<AuthenticateResult> {
      requireRp();
      const confirm = input.purpose === 'confirm' && input.forUser !== undefined;
      const step = confirm ? { purpose: 'confirm' } : input.forUser ? { second_factor: true } : {};
      const failed = async (
        q: Queryable,
        reason: string,
        subject: string | null,
        message: string,
      ): Promise<AuthenticateResult> => {
        if (origin) await events.record(q, origin, 'sign_in.failed', subject, { method: 'passkey', reason, ...step });
        return { ok: false, message };
      };
      const response = parseCredential<AuthenticationResponseJSON>(input.credential);
      if (!response) return failed(deps.db, 'malformed', input.forUser?.id ?? null, FAILED);
      const requireUserVerification = !input.forUser;
      return deps.db.transaction(async (trx) => {
        const passkey = await credentials.findByCredentialIdForUpdate(trx, platform.id, response.id);
        if (!passkey || (input.forUser && passkey.userId !== input.forUser.id))
          return failed(trx, 'unknown_passkey', input.forUser?.id ?? null, 'security:passkeys.errors.notRegistered');
        let verified;
        try {
          verified = await webauthn.verifyAssertion(
            rp,
            response,
            passkey,
            input.expectedChallenge,
            requireUserVerification,
          );
        } catch (err) {
          deps.logger.info({ err: (err as Error).message, passkey: passkey.id }, 'passkey sign-in refused');
          const uv = /user could not be verified/i.test((err as Error).message);
          return failed(
            trx,
            uv ? 'user_not_verified' : 'invalid',
            passkey.userId,
            uv ? 'security:passkeys.errors.userNotVerified' : FAILED,
          );
        }
        if (!verified) return failed(trx, 'invalid', passkey.userId, FAILED);
        const row = await users.findById(trx, platform.id, passkey.userId);
        if (!row) return failed(trx, 'unknown_user', null, FAILED);
        if (row.disabledAt) return failed(trx, 'disabled', row.id, FAILED); // admin user disable: the generic failure
        // login_hint / id_token_hint / re-authentication: another account's passkey signs nobody in.
        if (input.onlyEmail !== undefined && normalizeEmail(row.email) !== normalizeEmail(input.onlyEmail))
          return failed(trx, 'other_account', row.id, `This sign-in is for ${input.onlyEmail}.`);
        const { newCounter, userVerified, credentialBackedUp } = verified;
        await credentials.markUsed(
          trx,
          passkey.id,
          { counter: newCounter, isBackedUp: credentialBackedUp },
          deps.now(),
        );
        const { passwordHash: _hash, ...user } = row;
        const amr = passkeyAmr(passkey, userVerified);
        if (origin && input.forUser && !confirm)
          await events.record(trx, origin, 'mfa.used', user.id, { factor: 'passkey', passkey_id: passkey.id, amr });
        else if (origin)
          await events.record(trx, origin, 'sign_in.succeeded', user.id, {
            method: 'passkey',
            passkey_id: passkey.id,
            amr,
            ...step,
          });
        return { ok: true, user, passkey, userVerified, amr } as const;
      });
    },

    /** Removes every passkey of the user (admin user reset-mfa: a lost device); how many there were. */
    removeAll: (platformId: string, userId: string) => credentials.removeAllByUser(deps.db, platformId, userId),

    /** Removes one of the user's passkeys; false when it was not theirs or already gone. With `origin`, mfa.removed in the same transaction. */
    async remove(platformId: string, userId: string, passkeyId: string, origin?: SecurityOrigin): Promise<boolean> {
      if (!isUuid(passkeyId)) return false;
      return deps.db.transaction(async (trx) => {
        const removed = await credentials.remove(trx, platformId, userId, passkeyId);
        if (removed && origin)
          await events.record(trx, origin, 'mfa.removed', userId, { factor: 'passkey', passkey_id: passkeyId });
        return removed;
      });
    },
  };
}

export type Passkeys = ReturnType<typeof createPasskeys>;
