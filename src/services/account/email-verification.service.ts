import * as accountTokens from '../../repositories/account-token.repository';
import * as userAccount from '../../repositories/user-account.repository';
import * as users from '../../repositories/user.repository';
import type { Platform } from '../../domain/platform';
import type { User } from '../../domain/user';
import type { Deps } from '../deps';
import type { AccountMail } from './account-mail';
import type { Locale } from '../../domain/locales';
import { inspectAccountToken, issueAccountToken, throttleWait, type LinkStatus } from './account-tokens';
import { createSecurityEvents, type SecurityOrigin } from '../security-events';

const VERIFY_EMAIL_TTL_SECONDS = 24 * 3600;
const THROTTLE = { intervalSeconds: 60, perHour: 5 };

export type VerifyResult =
  { status: 'verified'; user: User } | { status: Exclude<LinkStatus, 'valid'> | 'changed'; user?: User };

/** Email verification: a single-use, hashed, 24-hour link sets email_verified. */
export function createEmailVerification(deps: Deps, mail: AccountMail) {
  const events = createSecurityEvents(deps);
  const linkFor = (platformId: string, token: string) =>
    `${deps.config.baseUrl}/verify-email?platform_guid=${encodeURIComponent(platformId)}&token=${encodeURIComponent(token)}`;

  return {
    /** Mails a verification link unless one went out too recently; returns the seconds to wait (0: queued for sending). */
    async sendLink(
      platform: Platform,
      user: User,
      locale?: Locale,
    ): Promise<{ sent: true } | { sent: false; retryAfterSeconds: number }> {
      if (user.emailVerified) return { sent: false, retryAfterSeconds: 0 };
      const now = deps.now();
      const wait = await throttleWait(deps.db, user.id, 'verify_email', THROTTLE, now);
      if (wait > 0) return { sent: false, retryAfterSeconds: wait };
      // The link's token and its mail commit together: the outbox sends it even after a crash.
      await deps.db.transaction(async (trx) => {
        const token = await issueAccountToken(trx, user, 'verify_email', VERIFY_EMAIL_TTL_SECONDS, now);
        await mail.verifyEmail(
          trx,
          platform,
          user,
          linkFor(platform.id, token),
          VERIFY_EMAIL_TTL_SECONDS / 3600,
          locale,
        );
      });
      return { sent: true };
    },

    /** After sign-up: the first link (in the sign-up page's `locale`). A failure is logged, never in the way of the new account. */
    async sendAfterSignUp(platform: Platform, user: User, locale?: Locale): Promise<void> {
      try {
        await this.sendLink(platform, user, locale);
      } catch (err) {
        deps.logger.error({ userId: user.id, err: (err as Error).message }, 'verification link could not be issued');
      }
    },

    /** Uses the link once: email_verified becomes true for the address the link was sent to. `origin`: email.verified, same transaction. */
    async verify(platformId: string, token: string, origin?: SecurityOrigin): Promise<VerifyResult> {
      const now = deps.now();
      const found = await inspectAccountToken(deps.db, platformId, 'verify_email', token, now);
      const user = found.row && (await users.findById(deps.db, platformId, found.row.userId));
      if (found.status !== 'valid' || !found.row || !user)
        return { status: found.status === 'valid' ? 'invalid' : found.status, user };
      return deps.db.transaction(async (trx) => {
        // The update is the single-use check: of two concurrent clicks only one consumes the token.
        if (!(await accountTokens.markConsumed(trx, found.row!.id, now))) return { status: 'used' as const, user };
        const ok = await userAccount.markEmailVerified(
          trx,
          platformId,
          user.id,
          users.normalizeEmail(found.row!.email),
          now,
        );
        if (!ok) return { status: 'changed' as const, user };
        if (origin) await events.record(trx, origin, 'email.verified', user.id, { email: found.row!.email });
        return { status: 'verified' as const, user: { ...user, emailVerified: true, updatedAt: now } };
      });
    },
  };
}

export type EmailVerification = ReturnType<typeof createEmailVerification>;
