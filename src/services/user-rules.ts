import { parsePhoneNumberFromString } from 'libphonenumber-js/max';
import { z } from 'zod';
import { COMMON_PASSWORDS } from './common-passwords';

export const MIN_AGE_YEARS = 16;

export interface FieldError {
  field: string;
  message: string;
}

/** Age in whole years on `today` (UTC calendar day) for a YYYY-MM-DD birthdate. */
export function ageOn(birthdate: string, today: Date): number {
  const [y, m, d] = birthdate.split('-').map(Number);
  let age = today.getUTCFullYear() - y;
  const beforeBirthday = today.getUTCMonth() + 1 < m || (today.getUTCMonth() + 1 === m && today.getUTCDate() < d);
  if (beforeBirthday) age -= 1;
  return age;
}

export function checkBirthdate(value: string, today: Date): string | undefined {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value)) return 'Enter your date of birth as YYYY-MM-DD';
  const date = new Date(`${value}T00:00:00Z`);
  if (Number.isNaN(date.getTime()) || date.toISOString().slice(0, 10) !== value) return 'Enter a real date of birth';
  if (date > today) return 'Date of birth cannot be in the future';
  if (date.getUTCFullYear() < 1900) return 'Enter a date of birth after 1900';
  if (ageOn(value, today) < MIN_AGE_YEARS) return `You must be at least ${MIN_AGE_YEARS} years old to create an account`;
  return undefined;
}

/** E.164, or an error message. A number without a country code is read as international. */
export function normalizePhone(value: string): { ok: true; e164: string } | { ok: false; message: string } {
  const phone = parsePhoneNumberFromString(value.trim());
  if (!phone || !phone.isValid()) {
    return { ok: false, message: 'Enter a valid phone number with its country code, like +14155550123' };
  }
  return { ok: true, e164: phone.number };
}

export function checkPassword(password: string, minLength: number, email?: string): string | undefined {
  if (password.length < minLength) return `Use at least ${minLength} characters`;
  if (password.length > 256) return 'Use at most 256 characters';
  const lower = password.toLowerCase();
  if (COMMON_PASSWORDS.has(lower)) return 'This password is too common; choose another';
  if (email && lower === email.trim().toLowerCase()) return 'Your password cannot be your email address';
  return undefined;
}

const emailSchema = z.email();
export function checkEmail(email: string): string | undefined {
  if (email.length > 254 || !emailSchema.safeParse(email.trim()).success) return 'Enter a valid email address';
  return undefined;
}

export function checkName(value: string, label: string): string | undefined {
  const v = value.trim();
  if (!v) return `Enter your ${label}`;
  if (v.length > 100) return `Your ${label} is too long`;
  return undefined;
}

/*
 * preferred_username (OIDC Core 5.1) is a display name, not an identifier: not unique (RPs must
 * not rely on it, OIDC Core 5.7), free to change. Letters, marks and digits of any script plus
 * `.`, `_`, `-`: no spaces, no `@` (it must not pass for an email address), no symbols, no
 * invisible or direction-changing characters.
 */
export const PREFERRED_USERNAME_MAX = 64;
const USERNAME_CHARS = /^[\p{L}\p{M}\p{N}._-]+$/u;
const HAS_LETTER_OR_DIGIT = /[\p{L}\p{N}]/u;

/** As stored: trimmed, NFC (one form per visible string, so lengths and comparisons hold). */
export const normalizePreferredUsername = (value: string) => value.trim().normalize('NFC');

export function checkPreferredUsername(value: string): string | undefined {
  const v = normalizePreferredUsername(value);
  if (!v) return 'Enter a username';
  if (/\s/u.test(v)) return 'A username cannot contain spaces';
  if (!USERNAME_CHARS.test(v)) return 'Use only letters, digits, dots (.), hyphens (-) and underscores (_)';
  if ([...v].length > PREFERRED_USERNAME_MAX) return `Use at most ${PREFERRED_USERNAME_MAX} characters`;
  if (!HAS_LETTER_OR_DIGIT.test(v)) return 'Include at least one letter or digit';
  return undefined;
}

/**
 * The username a new user starts with: "given.family", lower case, other characters folded to
 * `-` ("Mary Ann O'Brien" → "mary-ann.o-brien"). From the name, never the email: `profile`
 * already releases the name, while the address is for apps granted `email` only.
 */
export function defaultPreferredUsername(givenName: string, familyName: string): string {
  const part = (s: string) => s.normalize('NFKC').toLowerCase().replace(/[^\p{L}\p{M}\p{N}]+/gu, '-').replace(/^-+|-+$/g, '');
  const joined = [part(givenName), part(familyName)].filter(Boolean).join('.');
  const cut = [...joined].slice(0, PREFERRED_USERNAME_MAX).join('').replace(/[.-]+$/, '').normalize('NFC');
  return HAS_LETTER_OR_DIGIT.test(cut) ? cut : 'user';
}
