import { z } from 'zod';
import { pageOf, PageQuery, PlatformParams, Timestamp, Uuid } from './common.schemas';

/*
 * Users as operators see them. The zod schemas check shapes only (types, lengths the database
 * needs); the content rules and their messages are the sign-up's (users.service) and the account
 * page's (profile.service), so a field is refused with the same words everywhere.
 */

const Text = (max: number) => z.string().max(max, `must be at most ${max} characters`);

export const UserParams = PlatformParams.extend({ sub: Uuid.meta({ description: "The user's subject identifier" }) });
export const UserSessionParams = UserParams.extend({
  session_id: Uuid.meta({ description: 'A session (refresh-token family) id' }),
});
export const UserConsentParams = UserParams.extend({
  client_id: Uuid.meta({ description: 'The client whose consent to revoke' }),
});

export const UserListQuery = PageQuery.extend({
  email: z
    .string()
    .trim()
    .min(1, 'must not be empty')
    .max(254, 'must be at most 254 characters')
    .optional()
    .meta({ description: 'Part of the email address (case-insensitive): a prefix, a domain or any substring' }),
});

export const AddressWire = z
  .object({
    formatted: z.string().optional(),
    street_address: z.string().optional(),
    locality: z.string().optional(),
    region: z.string().optional(),
    postal_code: z.string().optional(),
    country: z.string().optional().meta({ description: 'ISO 3166-1 alpha-2' }),
  })
  .meta({ id: 'UserAddress' });

export const User = z
  .object({
    sub: Uuid,
    platform_guid: Uuid,
    email: z.string(),
    email_verified: z.boolean(),
    given_name: z.string(),
    family_name: z.string(),
    middle_name: z.string().nullable(),
    nickname: z.string().nullable(),
    preferred_username: z.string(),
    birthdate: z.string().nullable(),
    phone_number: z.string().nullable(),
    address: AddressWire.nullable(),
    picture: z.string().nullable(),
    created_at: Timestamp,
    updated_at: Timestamp,
    disabled_at: Timestamp.nullable().meta({
      description: 'Set while the user is disabled: no sign-in, no token accepted',
    }),
  })
  .meta({ id: 'User' });

export const UserDetail = User.extend({
  mfa: z.object({
    totp: z.boolean().meta({ description: 'An authenticator app is enrolled (confirmed)' }),
    recovery_codes: z.number().int().meta({ description: 'Unused recovery codes' }),
    passkeys: z.number().int(),
  }),
}).meta({ id: 'UserDetail' });

export const UserPage = pageOf(User, 'UserPage');

export const UserCreate = z
  .object({
    email: Text(254),
    password: Text(256),
    given_name: Text(1000),
    family_name: Text(1000),
    birthdate: Text(20).meta({ description: 'YYYY-MM-DD' }),
    phone_number: Text(50).optional(),
    preferred_username: Text(1000).optional().meta({ description: 'Absent: derived from the name' }),
    email_verified: z.boolean().optional(),
  })
  .strict()
  .meta({ id: 'UserCreate' });

export const AddressInput = z
  .object({
    street_address: Text(1000).optional(),
    locality: Text(1000).optional(),
    region: Text(1000).optional(),
    postal_code: Text(1000).optional(),
    country: Text(10).optional(),
  })
  .strict();

export const UserUpdate = z
  .object({
    email: Text(254)
      .optional()
      .meta({ description: 'Unique on the platform (409 if taken); unverified unless email_verified is given' }),
    email_verified: z.boolean().optional(),
    given_name: Text(1000).optional(),
    family_name: Text(1000).optional(),
    middle_name: Text(1000).nullable().optional(),
    nickname: Text(1000).nullable().optional(),
    preferred_username: Text(1000).optional(),
    birthdate: Text(20).optional().meta({ description: 'YYYY-MM-DD' }),
    phone_number: Text(50).nullable().optional(),
    address: AddressInput.nullable().optional().meta({ description: 'Replaces the whole address; null removes it' }),
  })
  .strict()
  .refine((b) => Object.keys(b).length > 0, 'give at least one field to change')
  .meta({ id: 'UserUpdate' });

export const UserSession = z
  .object({
    session_id: Uuid,
    client_id: Uuid,
    client_name: z.string(),
    scope: z.string(),
    auth_time: Timestamp.meta({ description: 'When the user signed in for this grant' }),
    created_at: Timestamp,
    last_used_at: Timestamp.meta({ description: 'The last refresh (or the grant itself)' }),
  })
  .meta({
    id: 'UserSession',
    description: "One app's live refresh-token family: a sign-in that keeps the app signed in",
  });

export const UserSessions = z.object({ items: z.array(UserSession) }).meta({ id: 'UserSessions' });

export const UserConsent = z
  .object({ client_id: Uuid, client_name: z.string(), scopes: z.array(z.string()), updated_at: Timestamp })
  .meta({ id: 'UserConsent' });

export const UserConsents = z.object({ items: z.array(UserConsent) }).meta({ id: 'UserConsents' });

/** What an action did, for the operator (counts, never a secret). */
export const UserActionResult = z
  .object({
    sub: Uuid,
    done: z.string().meta({ example: 'disabled' }),
    refresh_tokens_revoked: z.number().int().optional(),
    throttles_cleared: z.number().int().optional(),
    totp_removed: z.boolean().optional(),
    passkeys_removed: z.number().int().optional(),
  })
  .meta({ id: 'UserActionResult' });

export const UserDeleted = z
  .object({ sub: Uuid, email: z.string(), deleted: z.literal(true) })
  .meta({ id: 'UserDeleted' });
