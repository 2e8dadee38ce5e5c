import type { Response } from 'express';
import type { Services } from '../services';
import { presentPasskeys, type PasskeyRow } from '../presenters/passkey.presenter';
import { allowPasskeyScripts } from './middleware/security-headers';

export interface PasskeySection {
  /** False for an IP BASE_URL: the page says why instead of offering "Add a passkey" (DESIGN §15). */
  isAvailable: boolean;
  rows: PasskeyRow[];
  actions: { options: string; add: string; remove: string };
}

/** The account page's "Passkeys" section; lets the page load the passkey scripts when they can work. */
export async function passkeySection(s: Services, res: Response, platformId: string, userId: string): Promise<PasskeySection> {
  const q = `?platform_guid=${encodeURIComponent(platformId)}`;
  const isAvailable = s.passkeys.relyingParty.isAvailable;
  if (isAvailable) allowPasskeyScripts(res);
  return {
    isAvailable,
    rows: presentPasskeys(await s.passkeys.list(platformId, userId)),
    actions: { options: `/account/passkeys/options${q}`, add: `/account/passkeys${q}`, remove: `/account/passkeys/remove${q}` },
  };
}

/** The one-line warning shown instead of passkey buttons when BASE_URL is an IP address. */
export const PASSKEYS_NEED_HOST_NAME = 'Passkeys are not available here: this server is reached by an IP address, and browsers allow passkeys only on a host name.';
