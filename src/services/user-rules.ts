import type * as Libphonenumber from 'libphonenumber-js/max';
import { z } from 'zod';
import { COMMON_PASSWORDS } from './common-passwords';

/** libphonenumber's full metadata (~0.5 MB) is required at the first phone number, not at start (start time, RSS). */
let libphonenumber: typeof Libphonenumber | undefined;
const phoneLib = (): typeof Libphonenumber =>
  (libphonenumber ??= require('libphonenumber-js/max') as typeof Libphonenumber);

export const MIN_AGE_YEARS = 16;

/** A field's message: a catalog key, translated by the page (or in English by the admin API) with ruleValues. */
export interface FieldError {
  field: string;
  message: string;
}

const PASSWORD_MAX_LENGTH = 256;
/** The phone field as typed (the forms' maxlength); E.164 itself is at most 16 characters. */
const PHONE_MAX_LENGTH = 64;

/**
 * The values the rules' messages name ({{min}}, {{max}}, {{minAge}}, {{maxUsername}}, {{maxPhone}}):
 * whoever translates a FieldError passes these, so a message key stays a plain string everywhere.
 */
export const ruleValues = (passwordMinLength: number) => ({
  min: passwordMinLength,
  max: PASSWORD_MAX_LENGTH,
  minAge: MIN_AGE_YEARS,
  maxUsername: PREFERRED_USERNAME_MAX,
  maxPhone: PHONE_MAX_LENGTH,
});

/** Age in whole years on `today` (UTC calendar day) for a YYYY-MM-DD birthdate. */
function ageOn(birthdate: string, today: Date): number {
  const [y, m, d] = birthdate.split('-').map(Number);
  let age = today.getUTCFullYear() - y;
  const beforeBirthday = today.getUTCMonth() + 1 < m || (today.getUTCMonth() + 1 === m && today.getUTCDate() < d);
  if (beforeBirthday) age -= 1;
  return age;
}

export function checkBirthdate(value: string, today: Date): string | undefined {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value)) return 'signup:errors.birthdateFormat';
  const date = new Date(`${value}T00:00:00Z`);
  if (Number.isNaN(date.getTime()) || date.toISOString().slice(0, 10) !== value) return 'signup:errors.birthdateReal';
  if (date > today) return 'signup:errors.birthdateFuture';
  if (date.getUTCFullYear() < 1900) return 'signup:errors.birthdateTooOld';
  if (ageOn(value, today) < MIN_AGE_YEARS) return 'signup:errors.tooYoung';
  return undefined;
}

/** E.164, or an error message. A number without a country code is read as international. */
export function normalizePhone(value: string): { ok: true; e164: string } | { ok: false; message: string } {
  // libphonenumber finds a number inside any text ("+44 20 7946 0958, evenings"): the length is ours to bound.
  if (value.trim().length > PHONE_MAX_LENGTH) return { ok: false, message: 'signup:errors.phoneTooLong' };
  const phone = phoneLib().parsePhoneNumberFromString(value.trim());
  if (!phone || !phone.isValid()) {
    return { ok: false, message: 'signup:errors.phoneInvalid' };
  }
  return { ok: true, e164: phone.number };
}

export function checkPassword(password: string, minLength: number, email?: string): string | undefined {
  if (password.length < minLength) return 'password:errors.tooShort';
  if (password.length > PASSWORD_MAX_LENGTH) return 'password:errors.tooLong';
  const lower = password.toLowerCase();
  if (COMMON_PASSWORDS.has(lower)) return 'password:errors.common';
  if (email && lower === email.trim().toLowerCase()) return 'password:errors.isEmail';
  return undefined;
}

const emailSchema = z.email();
export function checkEmail(email: string): string | undefined {
  if (email.length > 254 || !emailSchema.safeParse(email.trim()).success) return 'signup:errors.emailInvalid';
  return undefined;
}

export function checkName(value: string, field: 'given_name' | 'family_name'): string | undefined {
  const v = value.trim();
  if (!v) return field === 'given_name' ? 'signup:errors.givenNameMissing' : 'signup:errors.familyNameMissing';
  if (v.length > 100)
    return field === 'given_name' ? 'signup:errors.givenNameTooLong' : 'signup:errors.familyNameTooLong';
  return undefined;
}

/*
 * preferred_username (OIDC Core 5.1) is a display name, not an identifier: not unique (RPs must
 * not rely on it, OIDC Core 5.7), free to change. Letters, marks and digits of any script plus
 * `.`, `_`, `-`: no spaces, no `@` (it must not pass for an email address), no symbols, no
 * invisible or direction-changing characters.
 */
const PREFERRED_USERNAME_MAX = 64;
const USERNAME_CHARS = /^[\p{L}\p{M}\p{N}._-]+$/u;
const HAS_LETTER_OR_DIGIT = /[\p{L}\p{N}]/u;

/** As stored: trimmed, NFC (one form per visible string, so lengths and comparisons hold). */
export const normalizePreferredUsername = (value: string) => value.trim().normalize('NFC');

export function checkPreferredUsername(value: string): string | undefined {
  const v = normalizePreferredUsername(value);
  if (!v) return 'signup:errors.usernameMissing';
  if (/\s/u.test(v)) return 'signup:errors.usernameSpaces';
  if (!USERNAME_CHARS.test(v)) return 'signup:errors.usernameChars';
  if ([...v].length > PREFERRED_USERNAME_MAX) return 'signup:errors.usernameTooLong';
  if (!HAS_LETTER_OR_DIGIT.test(v)) return 'signup:errors.usernameNoLetter';
  return undefined;
}

/**
 * The username a new user starts with: "given.family", lower case, other characters folded to
 * `-` ("Mary Ann O'Brien" → "mary-ann.o-brien"). From the name, never the email: `profile`
 * already releases the name, while the address is for apps granted `email` only.
 */
export function defaultPreferredUsername(givenName: string, familyName: string): string {
  const part = (s: string) =>
    s
      .normalize('NFKC')
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}]+/gu, '-')
      .replace(/^-+|-+$/g, '');
  const joined = [part(givenName), part(familyName)].filter(Boolean).join('.');
  const cut = [...joined]
    .slice(0, PREFERRED_USERNAME_MAX)
    .join('')
    .replace(/[.-]+$/, '')
    .normalize('NFC');
  return HAS_LETTER_OR_DIGIT.test(cut) ? cut : 'user';
}
