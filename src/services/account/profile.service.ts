import { randomToken } from '../../crypto/random';
import * as pictures from '../../repositories/user-picture.repository';
import * as userAccount from '../../repositories/user-account.repository';
import type { Address, User } from '../../domain/user';
import type { Deps } from '../deps';
import {
  checkName,
  checkPreferredUsername,
  normalizePhone,
  normalizePreferredUsername,
  type FieldError,
} from '../user-rules';
import { countryName, isCountryCode } from './countries';

/** The profile form, as typed. */
export interface ProfileInput {
  given_name: string;
  middle_name: string;
  family_name: string;
  nickname: string;
  preferred_username: string;
  phone_number: string;
  street_address: string;
  locality: string;
  region: string;
  postal_code: string;
  country: string;
}

export type ProfileResult = { ok: true; user: User; changed: boolean } | { ok: false; errors: FieldError[] };
export type PictureResult = { ok: true } | { ok: false; errors: FieldError[] };

export const PICTURE_MAX_BYTES = 1024 * 1024;
/** Raster formats only, recognised by their first bytes (never SVG: it can carry script). */
const SIGNATURES: { type: string; test: (b: Buffer) => boolean }[] = [
  {
    type: 'image/png',
    test: (b) => b.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])),
  },
  { type: 'image/jpeg', test: (b) => b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff },
  { type: 'image/gif', test: (b) => ['GIF87a', 'GIF89a'].includes(b.subarray(0, 6).toString('latin1')) },
  {
    type: 'image/webp',
    test: (b) => b.subarray(0, 4).toString('latin1') === 'RIFF' && b.subarray(8, 12).toString('latin1') === 'WEBP',
  },
];
export const sniffImageType = (bytes: Buffer) => SIGNATURES.find((s) => s.test(bytes))?.type;

/** JSON with sorted keys at every level (jsonb does not keep key order). */
const canonical = (v: unknown): string =>
  JSON.stringify(v, (_k, x) =>
    x && typeof x === 'object' && !Array.isArray(x)
      ? Object.fromEntries(Object.entries(x).sort(([a], [b]) => a.localeCompare(b)))
      : x,
  );

const optional = (v: string) => (v.trim() === '' ? null : v.trim());
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f]/; // eslint-disable-line no-control-regex

/** OIDC Core 5.1.1: `formatted` is the full mailing address, lines separated by newlines. */
function formatAddress(a: Address): string {
  const cityLine = [[a.locality, a.region].filter(Boolean).join(', '), a.postal_code].filter(Boolean).join(' ');
  return [a.street_address, cityLine, a.country ? countryName(a.country) : undefined].filter(Boolean).join('\n');
}

/** The account page's profile rules (also the admin API's user update): field errors, the phone in E.164, the address with `formatted`. */
export function checkProfile(
  input: ProfileInput,
  user: User,
): { errors: FieldError[]; phone: string | null; address: Address | null } {
  const errors: FieldError[] = [];
  const push = (field: string, message: string | undefined) => message && errors.push({ field, message });
  push('given_name', checkName(input.given_name, 'given_name'));
  push('family_name', checkName(input.family_name, 'family_name'));
  // Messages are catalog keys (locales/<lng>/account.json: errors.tooLong.<field>, errors.badChars.<field>).
  const limits: [keyof ProfileInput, number][] = [
    ['middle_name', 100],
    ['nickname', 100],
    ['street_address', 300],
    ['locality', 100],
    ['region', 100],
    ['postal_code', 20],
  ];
  for (const [field, max] of limits) {
    const v = input[field].trim();
    if (v.length > max) push(field, `account:errors.tooLong.${field}`);
    else if (field !== 'street_address' && CONTROL.test(v)) push(field, `account:errors.badChars.${field}`);
  }
  // Required: the claim is always released with `profile`. A value stored before these rules
  // existed (any string without spaces) stays acceptable while the user leaves it unchanged.
  if (normalizePreferredUsername(input.preferred_username) !== user.preferredUsername)
    push('preferred_username', checkPreferredUsername(input.preferred_username));
  let phone: string | null = null;
  if (input.phone_number.trim()) {
    const parsed = normalizePhone(input.phone_number);
    if (parsed.ok) phone = parsed.e164;
    else push('phone_number', parsed.message);
  }
  const country = input.country.trim().toUpperCase();
  if (country && !isCountryCode(country)) push('country', 'account:errors.country');
  const parts: Address = {
    street_address: optional(input.street_address.replace(/\r\n/g, '\n')) ?? undefined,
    locality: optional(input.locality) ?? undefined,
    region: optional(input.region) ?? undefined,
    postal_code: optional(input.postal_code) ?? undefined,
    country: country || undefined,
  };
  const present = Object.fromEntries(Object.entries(parts).filter(([, v]) => v !== undefined)) as Address;
  const address = Object.keys(present).length ? { formatted: formatAddress(present), ...present } : null;
  return { errors, phone, address };
}

/** The profile claims a user edits on the account page (name parts, nickname, username, phone, address, picture). */
export function createProfile(deps: Deps) {
  const check = checkProfile;

  return {
    /** Validates and saves the profile; updated_at moves only when a claim changed. */
    async updateProfile(user: User, input: ProfileInput): Promise<ProfileResult> {
      const { errors, phone, address } = check(input, user);
      if (errors.length) return { ok: false, errors };
      const next = {
        givenName: input.given_name.trim(),
        middleName: optional(input.middle_name),
        familyName: input.family_name.trim(),
        nickname: optional(input.nickname),
        preferredUsername: normalizePreferredUsername(input.preferred_username),
        phoneNumber: phone,
        address,
      };
      const current = {
        givenName: user.givenName,
        middleName: user.middleName,
        familyName: user.familyName,
        nickname: user.nickname,
        preferredUsername: user.preferredUsername,
        phoneNumber: user.phoneNumber,
        address: user.address,
      };
      if (canonical(next) === canonical(current)) return { ok: true, user, changed: false };
      const saved = await userAccount.updateProfile(deps.db, user.platformId, user.id, next, deps.now());
      return { ok: true, user: saved ?? user, changed: true };
    },

    /** An uploaded PNG, JPEG, GIF or WebP of at most 1 MiB, served by the provider under a fresh URL. */
    async setPictureUpload(user: User, bytes: Buffer): Promise<PictureResult> {
      if (bytes.length === 0)
        return { ok: false, errors: [{ field: 'picture', message: 'account:errors.pictureEmpty' }] };
      if (bytes.length > PICTURE_MAX_BYTES)
        return { ok: false, errors: [{ field: 'picture', message: 'account:errors.pictureTooBig' }] };
      const contentType = sniffImageType(bytes);
      if (!contentType) return { ok: false, errors: [{ field: 'picture', message: 'account:errors.pictureType' }] };
      const version = randomToken(9);
      const now = deps.now();
      await deps.db.transaction(async (trx) => {
        await pictures.upsert(trx, { userId: user.id, platformId: user.platformId, contentType, bytes, version }, now);
        await userAccount.updatePictureUrl(
          trx,
          user.platformId,
          user.id,
          `${deps.config.baseUrl}/pictures/${user.platformId}/${user.id}/${version}`,
          now,
        );
      });
      return { ok: true };
    },

    /** A picture hosted elsewhere: an absolute https URL. */
    async setPictureUrl(user: User, url: string): Promise<PictureResult> {
      let parsed: URL | undefined;
      try {
        parsed = new URL(url.trim());
      } catch {
        parsed = undefined;
      }
      if (!parsed || parsed.protocol !== 'https:' || url.trim().length > 2048 || parsed.username || parsed.password) {
        return { ok: false, errors: [{ field: 'picture_url', message: 'account:errors.pictureUrl' }] };
      }
      const now = deps.now();
      await deps.db.transaction(async (trx) => {
        await pictures.remove(trx, user.platformId, user.id);
        await userAccount.updatePictureUrl(trx, user.platformId, user.id, parsed.toString(), now);
      });
      return { ok: true };
    },

    /** Back to the generated avatar. */
    async removePicture(user: User): Promise<void> {
      const now = deps.now();
      await deps.db.transaction(async (trx) => {
        await pictures.remove(trx, user.platformId, user.id);
        await userAccount.updatePictureUrl(trx, user.platformId, user.id, null, now);
      });
    },

    /** The uploaded picture of that version, if it is still the current one. */
    async findPicture(platformId: string, userId: string, version: string) {
      const picture = await pictures.find(deps.db, platformId, userId);
      return picture && picture.version === version ? picture : undefined;
    },
  };
}

export type Profile = ReturnType<typeof createProfile>;
