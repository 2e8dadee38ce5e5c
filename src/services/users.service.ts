import { newId } from '../crypto/random';
import { hashPassword } from '../crypto/passwords';
import * as users from '../repositories/user.repository';
import type { User } from '../domain/user';
import type { Queryable } from '../db';
import type { Deps } from './deps';
import {
  checkBirthdate,
  checkEmail,
  checkName,
  checkPassword,
  checkPreferredUsername,
  defaultPreferredUsername,
  normalizePhone,
  normalizePreferredUsername,
  type FieldError,
} from './user-rules';

export interface NewUserInput {
  email: string;
  /** null: an account without a password, signed up through an upstream provider. */
  password: string | null;
  givenName: string;
  familyName: string;
  birthdate: string;
  phoneNumber?: string;
  /** Absent: derived from the name (defaultPreferredUsername); the claim is always released with `profile`. */
  preferredUsername?: string;
  emailVerified?: boolean;
}

/** `emailTaken`: the address already has an account (sign-up throttling counts it as probing). */
export type CreateUserResult = { ok: true; user: User } | { ok: false; errors: FieldError[]; emailTaken?: true };

const emailTaken = (): CreateUserResult => ({
  ok: false,
  errors: [{ field: 'email', message: 'signup:errors.emailTaken' }],
  emailTaken: true,
});

/** Validates and stores a new user; expected mistakes come back as field errors, not exceptions. */
export function createUsers(deps: Deps) {
  function validate(input: NewUserInput): { errors: FieldError[]; phone: string | null } {
    const errors: FieldError[] = [];
    const push = (field: string, message: string | undefined) => message && errors.push({ field, message });
    push('email', checkEmail(input.email));
    push('given_name', checkName(input.givenName, 'given_name'));
    push('family_name', checkName(input.familyName, 'family_name'));
    push('birthdate', input.birthdate ? checkBirthdate(input.birthdate, deps.now()) : 'signup:errors.birthdateMissing');
    if (input.password !== null)
      push('password', checkPassword(input.password, deps.config.passwordMinLength, input.email));
    if (input.preferredUsername !== undefined)
      push('preferred_username', checkPreferredUsername(input.preferredUsername));
    let phone: string | null = null;
    if (input.phoneNumber?.trim()) {
      const parsed = normalizePhone(input.phoneNumber);
      if (parsed.ok) phone = parsed.e164;
      else push('phone_number', parsed.message);
    }
    return { errors, phone };
  }

  return {
    /** `alsoInTransaction` (the admin API's audit event) commits with the new row, or neither does. */
    async createUser(
      platformId: string,
      input: NewUserInput,
      alsoInTransaction?: (trx: Queryable, user: User) => Promise<void>,
    ): Promise<CreateUserResult> {
      const { errors, phone } = validate(input);
      if (errors.length) return { ok: false, errors };
      if (await users.findByEmail(deps.db, platformId, input.email)) {
        return emailTaken();
      }
      const passwordHash = input.password === null ? null : await hashPassword(input.password, deps.config.argon2);
      const insert = (q: Queryable) =>
        users.insertUnlessEmailTaken(q, {
          id: newId(),
          platformId,
          email: input.email.trim(),
          emailVerified: input.emailVerified ?? false,
          passwordHash,
          givenName: input.givenName.trim(),
          familyName: input.familyName.trim(),
          birthdate: input.birthdate,
          phoneNumber: phone,
          preferredUsername:
            input.preferredUsername === undefined
              ? defaultPreferredUsername(input.givenName, input.familyName)
              : normalizePreferredUsername(input.preferredUsername),
        });
      const user = alsoInTransaction
        ? await deps.db.transaction(async (trx) => {
            const created = await insert(trx);
            if (created) await alsoInTransaction(trx, created);
            return created;
          })
        : await insert(deps.db);
      // A concurrent sign-up with the same email won the race.
      if (!user) return emailTaken();
      return { ok: true, user };
    },

    findById: (platformId: string, id: string) => users.findById(deps.db, platformId, id),
    findManyByIds: (platformId: string, ids: string[]) => users.findManyByIds(deps.db, platformId, ids),
    findByEmail: (platformId: string, email: string) => users.findByEmail(deps.db, platformId, email),
  };
}

export type Users = ReturnType<typeof createUsers>;
