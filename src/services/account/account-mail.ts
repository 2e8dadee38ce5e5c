import path from 'node:path';
import ejs from 'ejs';
import { createMailTransport, type MailMessage, type MailTransport } from '../../mail/transport';
import type { UserRow } from '../../repositories/user.repository';
import type { Deps } from '../deps';

const VIEWS = path.resolve(__dirname, '..', '..', '..', 'views', 'mail');

interface Content {
  subject: string;
  intro: string;
  actionLabel?: string;
  actionUrl?: string;
  outro?: string;
}

/**
 * The account mails: plain, branded with the platform's name, in text and HTML. Delivery does not
 * hold up the request (and so never tells by its timing whether an address has an account);
 * a failure is logged.
 */
export function createAccountMail(deps: Deps, transport: MailTransport = createMailTransport({ smtpUrl: deps.config.smtpUrl, dataDir: deps.config.dataDir, from: deps.config.mailFrom })) {
  async function compose(platformName: string, user: Pick<UserRow, 'email' | 'emailVerified' | 'givenName' | 'familyName'>, c: Content): Promise<MailMessage> {
    // Names are what whoever signed up typed: until the address is verified, the mailbox's owner may
    // not be that person, so a mail carries none of it (no greeting by name, no display name).
    const named = user.emailVerified;
    const data = { ...c, platformName, greeting: named ? `Hello ${user.givenName},` : 'Hello,' };
    const [text, html] = await Promise.all([ejs.renderFile(path.join(VIEWS, 'message.text.ejs'), data), ejs.renderFile(path.join(VIEWS, 'message.html.ejs'), data)]);
    return { to: { name: named ? `${user.givenName} ${user.familyName}`.trim() : '', address: user.email }, fromName: platformName, subject: c.subject, text, html };
  }

  function deliver(platformName: string, user: Pick<UserRow, 'id' | 'email' | 'emailVerified' | 'givenName' | 'familyName'>, c: Content): Promise<void> {
    const sent = compose(platformName, user, c)
      .then((m) => transport.send(m))
      .catch((err: Error) => deps.logger.error({ userId: user.id, subject: c.subject, err: err.message }, 'mail could not be sent'));
    return sent;
  }

  return {
    transport,
    verifyEmail: (platformName: string, user: UserRow, url: string, ttlHours: number) =>
      deliver(platformName, user, {
        subject: `Verify your email address for ${platformName}`,
        intro: `Confirm that ${user.email} is your email address to finish setting up your ${platformName} account.`,
        actionLabel: 'Verify email address',
        actionUrl: url,
        outro: `This link works once and expires in ${ttlHours} hours. If you did not create an account, ignore this email.`,
      }),
    resetPassword: (platformName: string, user: UserRow, url: string, ttlMinutes: number) =>
      deliver(platformName, user, {
        subject: `Reset your ${platformName} password`,
        intro: `Someone asked to reset the password of the ${platformName} account for ${user.email}.`,
        actionLabel: 'Choose a new password',
        actionUrl: url,
        outro: `This link works once and expires in ${ttlMinutes} minutes. If you did not ask for it, ignore this email: your password stays as it is.`,
      }),
    passwordChanged: (platformName: string, user: UserRow) =>
      deliver(platformName, user, {
        subject: `Your ${platformName} password was changed`,
        intro: `The password of your ${platformName} account (${user.email}) was just changed, and every other device was signed out.`,
        outro: 'If this was not you, reset your password at once from the sign-in page.',
      }),
  };
}

export type AccountMail = ReturnType<typeof createAccountMail>;
