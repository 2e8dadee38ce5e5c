/**
 * Second factors and how a sign-in is described to apps: the platform's
 * policy, RFC 8176 authentication method references and the two acr values. Pure rules only.
 */

export const MFA_POLICIES = ['off', 'optional', 'required'] as const;
/** off: never asked, no enrolment; optional: asked of users who enrolled; required: every user enrols. */
export type MfaPolicy = (typeof MFA_POLICIES)[number];
export const isMfaPolicy = (v: unknown): v is MfaPolicy =>
  typeof v === 'string' && (MFA_POLICIES as readonly string[]).includes(v);

/** RFC 8176 values this provider emits, and `fed`: a sign-in through an upstream identity provider (not an RFC 8176 value). */
export type AuthMethod = 'pwd' | 'otp' | 'hwk' | 'swk' | 'user' | 'mfa' | 'fed';

export const ACR_PWD = 'urn:latchkey:acr:pwd';
export const ACR_MFA = 'urn:latchkey:acr:mfa';
export const ACR_VALUES_SUPPORTED = [ACR_PWD, ACR_MFA] as const;
export type Acr = (typeof ACR_VALUES_SUPPORTED)[number];

/** Second-factor methods (amr values) that count as a factor beyond the password. */
const SECOND_FACTORS: readonly AuthMethod[] = ['otp', 'hwk', 'swk'];

/**
 * The amr of a sign-in made of `methods` in order, `mfa` appended when two factors were used
 * (a password and an otp/hwk/swk, or a passkey with user verification: RFC 8176 §2).
 */
export function amrOf(methods: readonly AuthMethod[]): AuthMethod[] {
  // `fed` comes with `mfa` only from an upstream trusted for its MFA whose own amr showed two factors.
  const upstreamMfa = methods.includes('fed') && methods.includes('mfa');
  const out: AuthMethod[] = [...new Set(methods.filter((m) => m !== 'mfa'))];
  // An upstream sign-in is one factor, like a password: a local otp/passkey after it makes two.
  const factors =
    (out.includes('pwd') || out.includes('fed') ? 1 : 0) +
    (out.some((m) => SECOND_FACTORS.includes(m)) ? 1 : 0) +
    (out.includes('user') ? 1 : 0);
  if (factors >= 2 || upstreamMfa) out.push('mfa');
  return out;
}

/** The acr a sign-in reached. */
export const acrOf = (amr: readonly AuthMethod[]): Acr => (amr.includes('mfa') ? ACR_MFA : ACR_PWD);

/** Whether a sign-in that reached `acr` satisfies the request's `acr_values` (space-separated, any of them). */
export function acrSatisfies(acr: Acr, acrValues: string | undefined): boolean {
  const wanted = (acrValues ?? '').split(' ').filter(Boolean);
  if (!wanted.includes(ACR_MFA)) return true; // unknown values and pwd ask nothing more (OIDC Core 3.1.2.1: voluntary)
  return acr === ACR_MFA;
}

/** Space-separated text as stored with codes and refresh families. */
export const amrToText = (amr: readonly AuthMethod[]): string => amr.join(' ');

/** A six-digit code as typed: spaces and a middle dash are ignored. */
export function normalizeTotpCode(input: string): string | undefined {
  const code = input.replace(/[\s-]/g, '');
  return /^\d{6}$/.test(code) ? code : undefined;
}

export const RECOVERY_CODE_COUNT = 10;
/** Recovery code alphabet: lower-case letters and digits without look-alikes (0/o, 1/l/i). */
export const RECOVERY_CODE_ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789';

/** A recovery code as typed: case, spaces and dashes ignored; undefined when it cannot be one. */
export function normalizeRecoveryCode(input: string): string | undefined {
  const code = input.toLowerCase().replace(/[\s-]/g, '');
  if (code.length !== 10) return undefined;
  return [...code].every((c) => RECOVERY_CODE_ALPHABET.includes(c)) ? code : undefined;
}

/** The shown form of a normalised recovery code: `xxxxx-xxxxx`. */
export const formatRecoveryCode = (code: string): string => `${code.slice(0, 5)}-${code.slice(5)}`;
