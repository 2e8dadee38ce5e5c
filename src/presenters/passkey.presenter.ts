import type { Passkey } from '../domain/passkey';

const day = new Intl.DateTimeFormat('en-GB', { day: 'numeric', month: 'short', year: 'numeric', timeZone: 'UTC' });

export interface PasskeyRow {
  id: string;
  name: string;
  /** "Added 23 Nov 2026 · Last used 24 Nov 2026" */
  detail: string;
  kind: string;
}

/** The account page's list of passkeys, oldest first. */
export function presentPasskeys(passkeys: Passkey[]): PasskeyRow[] {
  return passkeys.map((p) => ({
    id: p.id,
    name: p.name,
    detail: `Added ${day.format(p.createdAt)} · ${p.lastUsedAt ? `Last used ${day.format(p.lastUsedAt)}` : 'Never used'}`,
    kind: p.isBackupEligible ? 'Synced passkey' : 'Device-bound passkey',
  }));
}
