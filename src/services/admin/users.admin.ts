import type { z } from 'zod';
import { OAuthError, invalidRequest } from '../../errors';
import type { Queryable } from '../../db';
import type { AdminActor } from '../../domain/admin';
import type { Platform } from '../../domain/platform';
import type { Address } from '../../domain/user';
import * as accountTokens from '../../repositories/account-token.repository';
import * as throttles from '../../repositories/attempt-throttle.repository';
import * as consents from '../../repositories/consent.repository';
import * as mfa from '../../repositories/mfa.repository';
import { revokeUserTokens } from '../../repositories/access-token-liveness.repository';
import * as tokens from '../../repositories/token.repository';
import * as userAdmin from '../../repositories/user-admin.repository';
import * as users from '../../repositories/user.repository';
import * as passkeys from '../../repositories/webauthn-credential.repository';
import type { Deps } from '../deps';
import type { Audit } from '../audit.service';
import type { Platforms } from '../platforms.service';
import type { Users } from '../users.service';
import type { AttemptThrottle } from '../attempt-throttle.service';
import type { PasswordReset } from '../account/password-reset.service';
import type { BackchannelLogout } from '../backchannel-logout.service';
import { endAllSessions } from '../account/account-security.service';
import { checkProfile, type ProfileInput } from '../account/profile.service';
import { checkBirthdate, checkEmail, ruleValues, type FieldError } from '../user-rules';
import { assertPlatformAccess, unknownPlatform } from './access';
import { decodeCursor, toPage } from './cursor';
import type { UserCreate, UserListQuery, UserUpdate } from '../../wire/admin/users.schemas';
import { translatorFor } from '../../i18n/catalogs';

export interface UsersAdminBase {
  audit: Audit;
  platforms: Platforms;
  users: Users;
  throttle: AttemptThrottle;
  passwordReset: PasswordReset;
  backchannelLogout: BackchannelLogout;
}

/** Field errors (the sign-up's and account page's words) as one 400 naming each field. */
// The rules give catalog keys; the admin API speaks English.
const fieldErrors = (errors: FieldError[], values: Record<string, number> = ruleValues(0)) =>
  invalidRequest(errors.map((e) => `${e.field}: ${translatorFor('en')(e.message, values)}`).join('; '));
const emailTaken = () =>
  new OAuthError('invalid_request', 'email: An account with this email already exists', { status: 409 });
const unknownUser = (sub: string) => new OAuthError('not_found', `unknown user "${sub}"`);

const ADDRESS_PARTS = ['street_address', 'locality', 'region', 'postal_code', 'country'] as const;
const PROFILE_FIELDS = [
  'given_name',
  'family_name',
  'middle_name',
  'nickname',
  'preferred_username',
  'phone_number',
  'address',
] as const;

/**
 * Users as operators manage them (API, CLI, console). Every change is audited in its
 * transaction; content rules are the sign-up's (create) and the account page's (update).
 */
export function createUsersAdmin(deps: Deps, base: UsersAdminBase) {
  const { audit } = base;

  /** The platform, if it exists and the actor may see it; else not_found. */
  async function platformOf(actor: AdminActor, platformId: string): Promise<Platform> {
    assertPlatformAccess(actor, platformId);
    const platform = await base.platforms.findPlatform(platformId);
    if (!platform) throw unknownPlatform(platformId);
    return platform;
  }

  /** The user of that platform (read in `q`: pass the transaction when changing it). */
  async function userOf(q: Queryable, platformId: string, sub: string) {
    const user = await users.findById(q, platformId, sub);
    if (!user) throw unknownUser(sub);
    return user;
  }

  /** Runs `change` in a transaction with the user read in it; not_found first when unknown. */
  async function change<T>(
    actor: AdminActor,
    platformId: string,
    sub: string,
    fn: (trx: Queryable, user: users.UserRow, now: Date) => Promise<T>,
  ): Promise<T> {
    await platformOf(actor, platformId);
    return deps.db.transaction(async (trx) => fn(trx, await userOf(trx, platformId, sub), deps.now()));
  }

  async function get(actor: AdminActor, platformId: string, sub: string) {
    await platformOf(actor, platformId);
    const user = await userOf(deps.db, platformId, sub);
    return { user, mfa: await userAdmin.mfaStatus(deps.db, platformId, sub) };
  }

  return {
    get,

    /** The user with this email (any case), for the CLI's `--email`. */
    async getByEmail(actor: AdminActor, platformId: string, email: string) {
      await platformOf(actor, platformId);
      const user = await users.findByEmail(deps.db, platformId, email);
      if (!user) throw new OAuthError('not_found', 'no user with that email on this platform');
      return get(actor, platformId, user.id);
    },

    /** Oldest first; `email` matches part of the address. */
    async list(actor: AdminActor, platformId: string, query: z.infer<typeof UserListQuery>) {
      await platformOf(actor, platformId);
      const rows = await userAdmin.listPage(deps.db, platformId, {
        email: query.email,
        after: decodeCursor(query.cursor),
        limit: query.limit + 1,
      });
      return toPage(rows, query.limit, (u) => ({ at: u.createdAt, id: u.id }));
    },

    /** The sign-up's rules and messages; user.created in the insert's transaction. */
    async create(actor: AdminActor, platformId: string, input: z.infer<typeof UserCreate>) {
      await platformOf(actor, platformId);
      const result = await base.users.createUser(
        platformId,
        {
          email: input.email,
          password: input.password,
          givenName: input.given_name,
          familyName: input.family_name,
          birthdate: input.birthdate,
          phoneNumber: input.phone_number,
          preferredUsername: input.preferred_username,
          emailVerified: input.email_verified ?? false,
        },
        (trx, user) =>
          audit.record(trx, actor, {
            kind: 'user.created',
            platformId,
            subject: user.id,
            details: { email: user.email, email_verified: user.emailVerified },
          }),
      );
      if (!result.ok)
        throw result.emailTaken ? emailTaken() : fieldErrors(result.errors, ruleValues(deps.config.passwordMinLength));
      return get(actor, platformId, result.user.id);
    },

    /** The account page's rules for the profile claims, the sign-up's for email and birthdate; user.updated {field: {from, to}}. */
    async update(actor: AdminActor, platformId: string, sub: string, input: z.infer<typeof UserUpdate>) {
      await change(actor, platformId, sub, async (trx, before, now) => {
        const next = validateUpdate(before, input, now);
        const diff = changes(before, next);
        if (Object.keys(diff).length === 0) return;
        const saved = await userAdmin.update(trx, platformId, sub, next, now);
        if (saved === 'email_taken') throw emailTaken();
        if (next.email !== undefined && diff.email) {
          // Links mailed to the old address must not verify or reset the new one.
          await accountTokens.consumeAllForUser(trx, sub, 'verify_email', now);
          await accountTokens.consumeAllForUser(trx, sub, 'reset_password', now);
        }
        await audit.record(trx, actor, { kind: 'user.updated', platformId, subject: sub, details: diff });
      });
      return get(actor, platformId, sub);
    },

    /**
     * No first factor signs the user in any more (the pages give the generic failure), browser
     * sessions end, refresh and access tokens are revoked, unexchanged codes deleted.
     */
    async disable(actor: AdminActor, platformId: string, sub: string) {
      await change(actor, platformId, sub, async (trx, user, now) => {
        if (user.disabledAt) return;
        await userAdmin.setDisabledAt(trx, platformId, sub, now);
        const revoked = await endAllSessions(trx, user, now, base.backchannelLogout);
        // Access tokens not issued from a refresh family (no offline_access) die too: nothing of the user stays live.
        await revokeUserTokens(trx, sub, now);
        await userAdmin.deleteUnusedCodes(trx, sub);
        await audit.record(trx, actor, {
          kind: 'user.disabled',
          platformId,
          subject: sub,
          details: { email: user.email, refresh_tokens_revoked: revoked },
        });
      });
      return get(actor, platformId, sub);
    },

    async enable(actor: AdminActor, platformId: string, sub: string) {
      await change(actor, platformId, sub, async (trx, user) => {
        if (!user.disabledAt) return;
        await userAdmin.setDisabledAt(trx, platformId, sub, null);
        await audit.record(trx, actor, {
          kind: 'user.enabled',
          platformId,
          subject: sub,
          details: { email: user.email },
        });
      });
      return get(actor, platformId, sub);
    },

    /** The user and every row they own (foreign keys cascade), their email's throttles and mails; the audit trail stays. */
    async remove(actor: AdminActor, platformId: string, sub: string) {
      await platformOf(actor, platformId);
      const known = await userOf(deps.db, platformId, sub);
      const keys = (await base.throttle.listThrottles({ platformId, email: known.email })).map((e) => e.key);
      return deps.db.transaction(async (trx) => {
        const user = await userOf(trx, platformId, sub);
        // Before the user goes: its session rows cascade away with it (the logout rows do not).
        await base.backchannelLogout.enqueueForUser(trx, platformId, sub);
        await userAdmin.remove(trx, platformId, sub);
        await throttles.deleteKeys(trx, keys);
        const mails = await userAdmin.deleteMailTo(trx, platformId, user.email);
        await audit.record(trx, actor, {
          kind: 'user.deleted',
          platformId,
          subject: sub,
          details: { email: user.email, mails_deleted: mails },
        });
        return { sub, email: user.email, deleted: true as const };
      });
    },

    /** Clears the sign-in and second-factor throttles of the user's email (every source). */
    async unlock(actor: AdminActor, platformId: string, sub: string) {
      await platformOf(actor, platformId);
      const known = await userOf(deps.db, platformId, sub);
      const keys = (await base.throttle.listThrottles({ platformId, email: known.email })).map((e) => e.key);
      await deps.db.transaction(async (trx) => {
        await throttles.deleteKeys(trx, keys);
        await audit.record(trx, actor, {
          kind: 'user.unlocked',
          platformId,
          subject: sub,
          details: { throttles_cleared: keys.length },
        });
      });
      return { sub, done: 'unlocked', throttles_cleared: keys.length };
    },

    /** The account page's "sign out everywhere": every browser session ends, every refresh family is revoked. */
    async signOut(actor: AdminActor, platformId: string, sub: string) {
      const revoked = await change(actor, platformId, sub, async (trx, user, now) => {
        const n = await endAllSessions(trx, user, now, base.backchannelLogout);
        await audit.record(trx, actor, {
          kind: 'user.signed_out',
          platformId,
          subject: sub,
          details: { refresh_tokens_revoked: n },
        });
        return n;
      });
      return { sub, done: 'signed_out', refresh_tokens_revoked: revoked };
    },

    /** Live refresh-token families (one per app sign-in that keeps the app signed in), newest first. */
    async sessions(actor: AdminActor, platformId: string, sub: string) {
      await get(actor, platformId, sub);
      return userAdmin.listSessions(deps.db, sub, deps.now());
    },

    async revokeSession(actor: AdminActor, platformId: string, sub: string, sessionId: string) {
      await change(actor, platformId, sub, async (trx, _user, now) => {
        const family = await userAdmin.findLiveFamily(trx, sub, sessionId);
        if (!family) throw new OAuthError('not_found', `no live session "${sessionId}" of this user`);
        await tokens.revokeFamily(trx, sessionId, now);
        await audit.record(trx, actor, {
          kind: 'user.session_revoked',
          platformId,
          subject: sub,
          clientId: family.clientId,
          details: { session_id: sessionId },
        });
      });
      return { sub, done: 'session_revoked', refresh_tokens_revoked: 1 };
    },

    /** Apps holding consent, most recent first. */
    async consents(actor: AdminActor, platformId: string, sub: string) {
      await get(actor, platformId, sub);
      const rows: { client_id: string; name: string; scopes: string[]; updated_at: Date }[] =
        await consents.listForUser(deps.db, sub);
      return rows.sort((a, b) => b.updated_at.getTime() - a.updated_at.getTime());
    },

    /** As on the account page: the consent goes, and the app's refresh and access tokens for the user with it. */
    async revokeConsent(actor: AdminActor, platformId: string, sub: string, clientId: string) {
      const revoked = await change(actor, platformId, sub, async (trx, _user, now) => {
        if ((await consents.remove(trx, sub, clientId)) === 0)
          throw new OAuthError('not_found', `no consent of this user for client "${clientId}"`);
        const n = await tokens.revokeByUserAndClient(trx, sub, clientId, now);
        await audit.record(trx, actor, {
          kind: 'user.consent_revoked',
          platformId,
          subject: sub,
          clientId,
          details: { refresh_tokens_revoked: n },
        });
        return n;
      });
      return { sub, done: 'consent_revoked', refresh_tokens_revoked: revoked };
    },

    /** A lost device: the authenticator app, recovery codes and passkeys go. */
    async resetMfa(actor: AdminActor, platformId: string, sub: string) {
      const result = await change(actor, platformId, sub, async (trx) => {
        const totpRemoved = Boolean((await mfa.findTotp(trx, sub))?.confirmedAt);
        await mfa.deleteTotp(trx, sub);
        await mfa.deleteRecoveryCodes(trx, sub);
        const passkeysRemoved = await passkeys.removeAllByUser(trx, platformId, sub);
        await audit.record(trx, actor, {
          kind: 'user.mfa_reset',
          platformId,
          subject: sub,
          details: { totp_removed: totpRemoved, passkeys_removed: passkeysRemoved },
        });
        return { totp_removed: totpRemoved, passkeys_removed: passkeysRemoved };
      });
      return { sub, done: 'mfa_reset', ...result };
    },

    /** Queues the password reset mail (the outbox, in this transaction); the link is never shown to the operator. */
    async sendPasswordReset(actor: AdminActor, platformId: string, sub: string) {
      const platform = await platformOf(actor, platformId);
      await change(actor, platformId, sub, async (trx, user) => {
        await base.passwordReset.sendLinkIn(trx, platform, user);
        await audit.record(trx, actor, {
          kind: 'user.password_reset_sent',
          platformId,
          subject: sub,
          details: { email: user.email },
        });
      });
      return { sub, done: 'password_reset_sent' };
    },
  };
}

/** The columns to write, validated; throws one 400 naming every bad field. */
function validateUpdate(before: users.UserRow, input: z.infer<typeof UserUpdate>, now: Date): userAdmin.UserChanges {
  const errors: FieldError[] = [];
  const next: userAdmin.UserChanges = {};
  if (input.email !== undefined) {
    const message = checkEmail(input.email);
    if (message) errors.push({ field: 'email', message });
    next.email = input.email.trim();
    if (users.normalizeEmail(input.email) !== users.normalizeEmail(before.email)) next.emailVerified = false;
  }
  if (input.email_verified !== undefined) next.emailVerified = input.email_verified;
  if (input.birthdate !== undefined) {
    const message = checkBirthdate(input.birthdate, now);
    if (message) errors.push({ field: 'birthdate', message });
    next.birthdate = input.birthdate;
  }
  if (PROFILE_FIELDS.some((f) => input[f] !== undefined)) {
    // The account page's form with the stored values where the request gives none.
    const addr: Address = input.address === undefined ? (before.address ?? {}) : (input.address ?? {});
    const form: ProfileInput = {
      given_name: input.given_name ?? before.givenName,
      family_name: input.family_name ?? before.familyName,
      middle_name: (input.middle_name === undefined ? before.middleName : input.middle_name) ?? '',
      nickname: (input.nickname === undefined ? before.nickname : input.nickname) ?? '',
      preferred_username: input.preferred_username ?? before.preferredUsername,
      phone_number: (input.phone_number === undefined ? before.phoneNumber : input.phone_number) ?? '',
      street_address: addr.street_address ?? '',
      locality: addr.locality ?? '',
      region: addr.region ?? '',
      postal_code: addr.postal_code ?? '',
      country: addr.country ?? '',
    };
    const checked = checkProfile(form, before);
    // The account page's rules give catalog keys; the admin API speaks English.
    errors.push(
      ...checked.errors
        .map((e) => ({ ...e, message: translatorFor('en')(e.message) }))
        .map((e) =>
          (ADDRESS_PARTS as readonly string[]).includes(e.field) ? { ...e, field: `address.${e.field}` } : e,
        ),
    );
    if (input.given_name !== undefined) next.givenName = form.given_name.trim();
    if (input.family_name !== undefined) next.familyName = form.family_name.trim();
    if (input.middle_name !== undefined) next.middleName = form.middle_name.trim() || null;
    if (input.nickname !== undefined) next.nickname = form.nickname.trim() || null;
    if (input.preferred_username !== undefined)
      next.preferredUsername = form.preferred_username.trim().normalize('NFC');
    if (input.phone_number !== undefined) next.phoneNumber = checked.phone;
    if (input.address !== undefined) next.address = checked.address;
  }
  if (errors.length) throw fieldErrors(errors);
  return next;
}

const WIRE: Record<keyof userAdmin.UserChanges, string> = {
  email: 'email',
  emailVerified: 'email_verified',
  givenName: 'given_name',
  familyName: 'family_name',
  middleName: 'middle_name',
  nickname: 'nickname',
  preferredUsername: 'preferred_username',
  birthdate: 'birthdate',
  phoneNumber: 'phone_number',
  address: 'address',
};

/** JSON with sorted keys (jsonb does not keep key order). */
const canonical = (v: unknown): string =>
  JSON.stringify(v, (_k, x) =>
    x && typeof x === 'object' && !Array.isArray(x)
      ? Object.fromEntries(Object.entries(x).sort(([a], [b]) => a.localeCompare(b)))
      : x,
  );

/** `{field: {from, to}}` over the fields that really change (profile claims are not secrets; no password is ever here). */
function changes(before: users.UserRow, next: userAdmin.UserChanges) {
  const out: Record<string, { from: unknown; to: unknown }> = {};
  for (const [key, value] of Object.entries(next) as [keyof userAdmin.UserChanges, unknown][]) {
    const from = before[key] ?? null;
    if (canonical(from) !== canonical(value ?? null)) out[WIRE[key]] = { from, to: value ?? null };
  }
  return out;
}

export type UsersAdmin = ReturnType<typeof createUsersAdmin>;
