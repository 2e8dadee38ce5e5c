import type { OperatorPasskey } from '../domain/operator';

const day = new Intl.DateTimeFormat('en-GB', { day: 'numeric', month: 'short', year: 'numeric', timeZone: 'UTC' });

export interface OperatorPasskeyRow {
  id: string;
  name: string;
  /** "Added 23 Nov 2026 · Last used 24 Nov 2026" */
  detail: string;
}

/** The console account page's passkeys, oldest first. */
export function presentOperatorPasskeys(passkeys: OperatorPasskey[]): OperatorPasskeyRow[] {
  return passkeys.map((p) => ({
    id: p.id,
    name: p.name,
    detail: `Added ${day.format(p.createdAt)} · ${p.lastUsedAt ? `Last used ${day.format(p.lastUsedAt)}` : 'Never used'}`,
  }));
}
