import path from 'node:path';
import ejs from 'ejs';
import type { Queryable } from '../../db';
import type { MailMessage } from '../../mail/transport';
import type { Platform } from '../../domain/platform';
import type { User } from '../../domain/user';
import type { MailOutbox } from '../mail-outbox.service';

const VIEWS = path.resolve(__dirname, '..', '..', '..', 'views', 'mail');

type MailPlatform = Pick<Platform, 'id' | 'name'>;
type MailUser = Pick<User, 'email' | 'emailVerified' | 'givenName' | 'familyName'>;

interface Content {
  subject: string;
  intro: string;
  actionLabel?: string;
  actionUrl?: string;
  outro?: string;
}

/**
 * The account mails: plain, branded with the platform's name, in text and HTML. Each is written
 * to the durable outbox in the caller's transaction (`db`), together with the event that causes
 * it (the link's token, the password change); the outbox worker sends it. So nothing here waits
 * on SMTP, and the request's timing never tells whether an address has an account.
 */
export function createAccountMail(outbox: MailOutbox) {
  async function compose(platformName: string, user: MailUser, c: Content): Promise<MailMessage> {
    // Names are what whoever signed up typed: until the address is verified, the mailbox's owner may
    // not be that person, so a mail carries none of it (no greeting by name, no display name).
    const named = user.emailVerified;
    const data = { ...c, platformName, greeting: named ? `Hello ${user.givenName},` : 'Hello,' };
    const [text, html] = await Promise.all([ejs.renderFile(path.join(VIEWS, 'message.text.ejs'), data), ejs.renderFile(path.join(VIEWS, 'message.html.ejs'), data)]);
    return { to: { name: named ? `${user.givenName} ${user.familyName}`.trim() : '', address: user.email }, fromName: platformName, subject: c.subject, text, html };
  }

  async function enqueue(db: Queryable, platform: MailPlatform, user: MailUser, kind: string, c: Content): Promise<void> {
    const message = await compose(platform.name, user, c);
    await outbox.enqueue(db, { ...message, platformId: platform.id, kind });
  }

  return {
    transport: outbox.transport,
    verifyEmail: (db: Queryable, platform: MailPlatform, user: MailUser, url: string, ttlHours: number) =>
      enqueue(db, platform, user, 'verify_email', {
        subject: `Verify your email address for ${platform.name}`,
        intro: `Confirm that ${user.email} is your email address to finish setting up your ${platform.name} account.`,
        actionLabel: 'Verify email address',
        actionUrl: url,
        outro: `This link works once and expires in ${ttlHours} hours. If you did not create an account, ignore this email.`,
      }),
    resetPassword: (db: Queryable, platform: MailPlatform, user: MailUser, url: string, ttlMinutes: number) =>
      enqueue(db, platform, user, 'reset_password', {
        subject: `Reset your ${platform.name} password`,
        intro: `Someone asked to reset the password of the ${platform.name} account for ${user.email}.`,
        actionLabel: 'Choose a new password',
        actionUrl: url,
        outro: `This link works once and expires in ${ttlMinutes} minutes. If you did not ask for it, ignore this email: your password stays as it is.`,
      }),
    /** DESIGN §17: proof that the mailbox's owner wants the upstream account linked (opened in the browser that asked). */
    linkAccount: (db: Queryable, platform: MailPlatform, user: MailUser, providerName: string, url: string, ttlMinutes: number) =>
      enqueue(db, platform, user, 'link_account', {
        subject: `Link your ${providerName} account to ${platform.name}`,
        intro: `Someone signing in to ${platform.name} through ${providerName} asked to link that ${providerName} account to the ${platform.name} account for ${user.email}.`,
        actionLabel: `Link ${providerName} and sign in`,
        actionUrl: url,
        outro: `Open this link in the browser where you asked for it. It works once and expires in ${ttlMinutes} minutes. If this was not you, ignore this email: nothing is linked.`,
      }),
    passwordChanged: (db: Queryable, platform: MailPlatform, user: MailUser) =>
      enqueue(db, platform, user, 'password_changed', {
        subject: `Your ${platform.name} password was changed`,
        intro: `The password of your ${platform.name} account (${user.email}) was just changed, and every other device was signed out.`,
        outro: 'If this was not you, reset your password at once from the sign-in page.',
      }),
  };
}

export type AccountMail = ReturnType<typeof createAccountMail>;
