import path from 'node:path';
import ejs from 'ejs';
import type { Queryable } from '../../db';
import type { MailMessage } from '../../mail/transport';
import type { Platform } from '../../domain/platform';
import type { User } from '../../domain/user';
import type { MailOutbox } from '../mail-outbox.service';
import { translatorFor, type Translate } from '../../i18n/catalogs';
import { DEFAULT_LOCALE, isLocale, type Locale } from '../../domain/locales';

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
 *
 * Each mail is composed in `locale`: the language of the browser request that caused
 * it, passed down by the router; English when a caller has none (it is optional and last so older
 * callers keep compiling).
 */
export function createAccountMail(outbox: MailOutbox) {
  async function compose(
    t: Translate,
    locale: Locale,
    platformName: string,
    user: MailUser,
    c: Content,
  ): Promise<MailMessage> {
    // Names are what whoever signed up typed: until the address is verified, the mailbox's owner may
    // not be that person, so a mail carries none of it (no greeting by name, no display name).
    const named = user.emailVerified;
    const data = {
      ...c,
      platformName,
      lang: locale,
      greeting: named ? t('mail:greeting', { name: user.givenName }) : t('mail:greetingAnonymous'),
      buttonFallback: t('mail:buttonFallback'),
      sentBy: t('mail:sentBy', { platform: platformName }),
      securedBy: t('mail:securedBy'),
    };
    const [text, html] = await Promise.all([
      ejs.renderFile(path.join(VIEWS, 'message.text.ejs'), data, { cache: true }),
      ejs.renderFile(path.join(VIEWS, 'message.html.ejs'), data, { cache: true }),
    ]);
    return {
      to: { name: named ? `${user.givenName} ${user.familyName}`.trim() : '', address: user.email },
      fromName: platformName,
      subject: c.subject,
      text,
      html,
    };
  }

  async function enqueue(
    db: Queryable,
    platform: MailPlatform,
    user: MailUser,
    kind: string,
    locale: Locale | undefined,
    content: (t: Translate) => Content,
  ): Promise<void> {
    const lng = isLocale(locale) ? locale : DEFAULT_LOCALE;
    const t = translatorFor(lng);
    const message = await compose(t, lng, platform.name, user, content(t));
    await outbox.enqueue(db, { ...message, platformId: platform.id, kind });
  }

  return {
    transport: outbox.transport,
    verifyEmail: (
      db: Queryable,
      platform: MailPlatform,
      user: MailUser,
      url: string,
      ttlHours: number,
      locale?: Locale,
    ) =>
      enqueue(db, platform, user, 'verify_email', locale, (t) => ({
        subject: t('mail:verify.subject', { platform: platform.name }),
        intro: t('mail:verify.intro', { email: user.email, platform: platform.name }),
        actionLabel: t('mail:verify.action'),
        actionUrl: url,
        outro: t('mail:verify.outro', { hours: ttlHours }),
      })),
    resetPassword: (
      db: Queryable,
      platform: MailPlatform,
      user: MailUser,
      url: string,
      ttlMinutes: number,
      locale?: Locale,
    ) =>
      enqueue(db, platform, user, 'reset_password', locale, (t) => ({
        subject: t('mail:reset.subject', { platform: platform.name }),
        intro: t('mail:reset.intro', { platform: platform.name, email: user.email }),
        actionLabel: t('mail:reset.action'),
        actionUrl: url,
        outro: t('mail:reset.outro', { minutes: ttlMinutes }),
      })),
    /** Proof that the mailbox's owner wants the upstream account linked (opened in the browser that asked). */
    linkAccount: (
      db: Queryable,
      platform: MailPlatform,
      user: MailUser,
      providerName: string,
      url: string,
      ttlMinutes: number,
      locale?: Locale,
    ) =>
      enqueue(db, platform, user, 'link_account', locale, (t) => ({
        subject: t('mail:link.subject', { provider: providerName, platform: platform.name }),
        intro: t('mail:link.intro', { platform: platform.name, provider: providerName, email: user.email }),
        actionLabel: t('mail:link.action', { provider: providerName }),
        actionUrl: url,
        outro: t('mail:link.outro', { minutes: ttlMinutes }),
      })),
    passwordChanged: (db: Queryable, platform: MailPlatform, user: MailUser, locale?: Locale) =>
      enqueue(db, platform, user, 'password_changed', locale, (t) => ({
        subject: t('mail:passwordChanged.subject', { platform: platform.name }),
        intro: t('mail:passwordChanged.intro', { platform: platform.name, email: user.email }),
        outro: t('mail:passwordChanged.outro'),
      })),
  };
}

export type AccountMail = ReturnType<typeof createAccountMail>;
