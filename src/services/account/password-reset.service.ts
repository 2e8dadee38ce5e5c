import { hashPassword } from '../../crypto/passwords';
import * as accountTokens from '../../repositories/account-token.repository';
import * as userAccount from '../../repositories/user-account.repository';
import * as users from '../../repositories/user.repository';
import type { Platform } from '../../domain/platform';
import type { User } from '../../domain/user';
import type { Queryable } from '../../db';
import type { Deps } from '../deps';
import { checkPassword } from '../user-rules';
import type { Locale } from '../../domain/locales';
import type { AccountMail } from './account-mail';
import { endAllSessions } from './account-security.service';
import { inspectAccountToken, issueAccountToken, throttleWait, type LinkStatus } from './account-tokens';
import { createSecurityEvents, type SecurityOrigin } from '../security-events';
import type { BackchannelLogout } from '../backchannel-logout.service';

export const RESET_PASSWORD_TTL_SECONDS = 30 * 60;
const THROTTLE = { intervalSeconds: 60, perHour: 5 };

export type ResetResult =
  | { ok: true; user: User }
  | { ok: false; status: Exclude<LinkStatus, 'valid'> }
  | { ok: false; status: 'valid'; field: 'password'; message: string; email: string };

/** Password reset: a single-use, hashed, 30-minute link; the answer never tells whether the email exists. */
export function createPasswordReset(
  deps: Deps,
  mail: AccountMail,
  backchannel: Pick<BackchannelLogout, 'enqueueForUser'>,
) {
  const linkFor = (platformId: string, token: string) =>
    `${deps.config.baseUrl}/password/reset?platform_guid=${encodeURIComponent(platformId)}&token=${encodeURIComponent(token)}`;

  const events = createSecurityEvents(deps);

  async function sendResetLink(
    platform: Platform,
    email: string,
    origin?: SecurityOrigin,
    locale?: Locale,
  ): Promise<void> {
    const user = email.trim() ? await users.findByEmail(deps.db, platform.id, email) : undefined;
    if (!user) return;
    const now = deps.now();
    if ((await throttleWait(deps.db, user.id, 'reset_password', THROTTLE, now)) > 0) return;
    await deps.db.transaction(async (trx) => {
      await issueLink(trx, platform, user, now, locale);
      if (origin) await events.record(trx, origin, 'password.reset_requested', user.id);
    });
  }

  /** A new link (only the newest works) and its mail, in `trx`: the link exists exactly when its mail will be sent (the outbox). */
  async function issueLink(trx: Queryable, platform: Platform, user: User, now: Date, locale?: Locale): Promise<void> {
    await accountTokens.consumeAllForUser(trx, user.id, 'reset_password', now);
    const token = await issueAccountToken(trx, user, 'reset_password', RESET_PASSWORD_TTL_SECONDS, now);
    await mail.resetPassword(trx, platform, user, linkFor(platform.id, token), RESET_PASSWORD_TTL_SECONDS / 60, locale);
  }

  return {
    /** An operator's "send a password reset mail" (admin users): in `trx`, without the request throttle. */
    sendLinkIn: (trx: Queryable, platform: Platform, user: User, locale?: Locale) =>
      issueLink(trx, platform, user, deps.now(), locale),

    /**
     * Mails a reset link when the email has an account. Returns nothing either way and never
     * throws (a failure is logged): callers run it after answering, so that the answer cannot tell
     * by its timing whether the address has an account. A request within a minute of
     * the last one (or beyond five an hour) sends nothing, silently. With `origin`, a link sent is
     * audited (password.reset_requested) in the link's transaction; nothing sent, nothing recorded.
     */
    async requestReset(platform: Platform, email: string, origin?: SecurityOrigin, locale?: Locale): Promise<void> {
      try {
        await sendResetLink(platform, email, origin, locale);
      } catch (err) {
        deps.logger.error({ platformId: platform.id, err: (err as Error).message }, 'password reset request failed');
      }
    },

    /** Whether the link can still be used (the form is shown only then), and for which address. */
    async checkLink(
      platformId: string,
      token: string,
    ): Promise<{ status: 'valid'; email: string } | { status: Exclude<LinkStatus, 'valid'> }> {
      const found = await inspectAccountToken(deps.db, platformId, 'reset_password', token, deps.now());
      return found.status === 'valid' && found.row
        ? { status: 'valid', email: found.row.email }
        : { status: found.status === 'valid' ? 'invalid' : found.status };
    },

    /**
     * Sets the new password (sign-up policy) and uses the link; every refresh token of the user is
     * revoked and every browser session signed out. `origin`: password.reset (and email.verified when
     * the link proved an unverified address), same transaction.
     */
    async resetPassword(
      platform: Platform,
      token: string,
      password: string,
      origin?: SecurityOrigin,
      locale?: Locale,
    ): Promise<ResetResult> {
      const now = deps.now();
      const found = await inspectAccountToken(deps.db, platform.id, 'reset_password', token, now);
      if (found.status !== 'valid' || !found.row)
        return { ok: false, status: found.status === 'valid' ? 'invalid' : found.status };
      const user = await users.findById(deps.db, platform.id, found.row.userId);
      if (!user) return { ok: false, status: 'invalid' };
      const policy = checkPassword(password, deps.config.passwordMinLength, user.email);
      if (policy) return { ok: false, status: 'valid', field: 'password', message: policy, email: user.email };
      const hash = await hashPassword(password, deps.config.argon2);
      const done = await deps.db.transaction(async (trx) => {
        if (!(await accountTokens.markConsumed(trx, found.row!.id, now))) return false;
        await userAccount.updatePasswordHash(trx, platform.id, user.id, hash);
        await accountTokens.consumeAllForUser(trx, user.id, 'reset_password', now);
        // The link reached the mailbox: that proves the address as well as a verification link does,
        // and is audited as one (email-verification.service.ts).
        const verified =
          !user.emailVerified &&
          (await userAccount.markEmailVerified(trx, platform.id, user.id, users.normalizeEmail(found.row!.email), now));
        if (verified && origin)
          await events.record(trx, origin, 'email.verified', user.id, { email: found.row!.email });
        const revoked = await endAllSessions(trx, user, now, backchannel);
        await mail.passwordChanged(trx, platform, user, locale);
        if (origin) await events.record(trx, origin, 'password.reset', user.id, { refresh_tokens_revoked: revoked });
        return true;
      });
      if (!done) return { ok: false, status: 'used' };
      return { ok: true, user };
    },
  };
}

export type PasswordReset = ReturnType<typeof createPasswordReset>;
