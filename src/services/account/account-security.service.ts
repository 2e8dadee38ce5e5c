import { hashPassword, verifyPassword } from '../../crypto/passwords';
import type { Queryable } from '../../db';
import { isUuid } from '../../domain/ids';
import * as consents from '../../repositories/consent.repository';
import * as tokens from '../../repositories/token.repository';
import * as userAccount from '../../repositories/user-account.repository';
import * as users from '../../repositories/user.repository';
import type { Platform } from '../../domain/platform';
import type { User } from '../../domain/user';
import type { KnownAccount } from '../../domain/interaction';
import type { Deps } from '../deps';
import { checkPassword, type FieldError } from '../user-rules';
import type { Locale } from '../../domain/locales';
import type { AccountMail } from './account-mail';
import { createSecurityEvents, type SecurityOrigin } from '../security-events';
import type { BackchannelLogout } from '../backchannel-logout.service';

/**
 * Signs a user out of every browser and app: browser sessions that signed in before now stop
 * counting (checked on each browser request, see revalidate-accounts), the apps they signed in to
 * get a back-channel logout token, and every refresh token family of the user is
 * revoked with its access tokens.
 */
export async function endAllSessions(
  trx: Queryable,
  user: Pick<User, 'id' | 'platformId'>,
  now: Date,
  backchannel: Pick<BackchannelLogout, 'enqueueForUser'>,
): Promise<number> {
  await userAccount.setSessionsValidAfter(trx, user.platformId, user.id, now);
  await backchannel.enqueueForUser(trx, user.platformId, user.id); // before the revocation: it reads the live tokens
  return tokens.revokeByUser(trx, user.id, now);
}

/** Passwords, sessions and connected apps of a signed-in user (the account page). */
export function createAccountSecurity(
  deps: Deps,
  mail: AccountMail,
  backchannel: Pick<BackchannelLogout, 'enqueueForUser'>,
) {
  const events = createSecurityEvents(deps);
  return {
    /**
     * The browser's accounts with those signed out elsewhere ("sign out everywhere", a password
     * reset) or deleted marked signed out. Unchanged list → same array.
     */
    async revalidate(accounts: KnownAccount[]): Promise<KnownAccount[]> {
      const signedIn = accounts.filter((a) => a.authTime !== null);
      if (signedIn.length === 0) return accounts;
      const validAfter = await userAccount.findSessionsValidAfter(
        deps.db,
        signedIn.map((a) => a.userId),
      );
      const stale = (a: KnownAccount) => {
        if (a.authTime === null) return false;
        if (!validAfter.has(a.userId)) return true;
        const after = validAfter.get(a.userId);
        // Sessions from before signedInAt existed fall back to auth_time (whole seconds).
        return after != null && (a.signedInAt ?? a.authTime * 1000) < after.getTime();
      };
      return accounts.some(stale)
        ? accounts.map((a) => (stale(a) ? { ...a, authTime: null, signedInAt: undefined } : a))
        : accounts;
    },

    /** The current password is required; the new one follows the sign-up policy. Other sessions end. `origin`: password.changed, same transaction. */
    async changePassword(
      platform: Platform,
      user: User,
      current: string,
      next: string,
      origin?: SecurityOrigin,
      locale?: Locale,
    ): Promise<{ ok: true } | { ok: false; errors: FieldError[] }> {
      const stored = current ? await users.findById(deps.db, user.platformId, user.id) : undefined; // the hash stays below the domain's User
      if (!stored?.passwordHash || !(await verifyPassword(stored.passwordHash, current))) {
        return { ok: false, errors: [{ field: 'current_password', message: 'account:errors.currentPassword' }] };
      }
      const policy = checkPassword(next, deps.config.passwordMinLength, user.email);
      if (policy) return { ok: false, errors: [{ field: 'new_password', message: policy }] };
      if (next === current)
        return { ok: false, errors: [{ field: 'new_password', message: 'account:errors.samePassword' }] };
      const hash = await hashPassword(next, deps.config.argon2);
      const now = deps.now();
      await deps.db.transaction(async (trx) => {
        await userAccount.updatePasswordHash(trx, platform.id, user.id, hash);
        const revoked = await endAllSessions(trx, user, now, backchannel);
        await mail.passwordChanged(trx, platform, user, locale);
        if (origin) await events.record(trx, origin, 'password.changed', user.id, { refresh_tokens_revoked: revoked });
      });
      return { ok: true };
    },

    /** Every browser (this one too) and every app's refresh tokens. `origin`: sign_out_everywhere, same transaction. */
    async signOutEverywhere(user: User, origin?: SecurityOrigin): Promise<void> {
      await deps.db.transaction(async (trx) => {
        const revoked = await endAllSessions(trx, user, deps.now(), backchannel);
        if (origin)
          await events.record(trx, origin, 'sign_out_everywhere', user.id, { refresh_tokens_revoked: revoked });
      });
    },

    /** Apps holding consent, most recent first. */
    async listApps(userId: string): Promise<{ clientId: string; name: string; scopes: string[]; updatedAt: Date }[]> {
      const rows = await consents.listForUser(deps.db, userId);
      return rows
        .map((r: { client_id: string; name: string; scopes: string[]; updated_at: Date }) => ({
          clientId: r.client_id,
          name: r.name,
          scopes: r.scopes,
          updatedAt: r.updated_at,
        }))
        .sort((a: { updatedAt: Date }, b: { updatedAt: Date }) => b.updatedAt.getTime() - a.updatedAt.getTime());
    },

    /** Withdraws consent; the app's refresh tokens (and their access tokens) die with it. `origin`: consent.revoked, same transaction. */
    async revokeApp(user: User, clientId: string, origin?: SecurityOrigin): Promise<boolean> {
      if (!isUuid(clientId)) return false;
      return deps.db.transaction(async (trx) => {
        const removed = await consents.remove(trx, user.id, clientId);
        const revoked = await tokens.revokeByUserAndClient(trx, user.id, clientId, deps.now());
        if (removed > 0 && origin)
          await events.record(trx, { ...origin, clientId }, 'consent.revoked', user.id, {
            refresh_tokens_revoked: revoked,
          });
        return removed > 0;
      });
    },

    findUser: (platformId: string, userId: string) => users.findById(deps.db, platformId, userId),
  };
}

export type AccountSecurity = ReturnType<typeof createAccountSecurity>;
