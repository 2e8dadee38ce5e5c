import { generateSync } from 'otplib';

/** The "Setup key" shown on the setup page, without its grouping spaces. */
export const setupKeyOf = (html: string): string => {
  const key = /id="setup-key">([A-Z2-7 ]+)</.exec(html)?.[1];
  if (!key) throw new Error(`no setup key on the page:\n${html.slice(0, 2000)}`);
  return key.replace(/ /g, '');
};

/** The TOTP code an authenticator app shows at `at` (RFC 6238: SHA-1, 6 digits, 30 s). */
export const totpAt = (secret: string, at: Date): string =>
  generateSync({ secret, epoch: Math.floor(at.getTime() / 1000) });

/** The recovery codes listed on the recovery-codes page. */
export const recoveryCodesOf = (html: string): string[] =>
  [...html.matchAll(/<li><code>([a-z0-9-]+)<\/code><\/li>/g)].map((m) => m[1]);
