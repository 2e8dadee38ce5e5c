import type { Passkey } from '../domain/passkey';
import type { Translate } from '../i18n/catalogs';

export interface PasskeyRow {
  id: string;
  name: string;
  /** "Added 23 Nov 2026 · Last used 24 Nov 2026", in the page's language */
  detail: string;
  kind: string;
}

/** The account page's list of passkeys, oldest first; dates in the page's `locale` (UTC days). */
export function presentPasskeys(passkeys: Passkey[], t: Translate, locale: string): PasskeyRow[] {
  const day = new Intl.DateTimeFormat(locale, { day: 'numeric', month: 'short', year: 'numeric', timeZone: 'UTC' });
  return passkeys.map((p) => ({
    id: p.id,
    name: p.name,
    detail: `${t('security:passkeys.added', { date: day.format(p.createdAt) })} · ${p.lastUsedAt ? t('security:passkeys.lastUsed', { date: day.format(p.lastUsedAt) }) : t('security:passkeys.neverUsed')}`,
    kind: p.isBackupEligible ? t('security:passkeys.synced') : t('security:passkeys.deviceBound'),
  }));
}
