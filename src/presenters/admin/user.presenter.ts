import type { z } from 'zod';
import type { User, UserConsent, UserDetail, UserSession } from '../../wire/admin/users.schemas';
import type { UserRow } from '../../repositories/user.repository';
import type { GrantSession } from '../../repositories/user-admin.repository';

/** The user's claims as the provider holds them, with the operator's facts; never the password hash. */
export function presentUser(u: UserRow): z.infer<typeof User> {
  return {
    sub: u.id,
    platform_guid: u.platformId,
    email: u.email,
    email_verified: u.emailVerified,
    given_name: u.givenName,
    family_name: u.familyName,
    middle_name: u.middleName,
    nickname: u.nickname,
    preferred_username: u.preferredUsername,
    birthdate: u.birthdate,
    phone_number: u.phoneNumber,
    address: u.address,
    picture: u.pictureUrl,
    created_at: u.createdAt.toISOString(),
    updated_at: u.updatedAt.toISOString(),
    disabled_at: u.disabledAt ? u.disabledAt.toISOString() : null,
  };
}

export function presentUserDetail(d: {
  user: UserRow;
  mfa: { totp: boolean; recoveryCodes: number; passkeys: number };
}): z.infer<typeof UserDetail> {
  return {
    ...presentUser(d.user),
    mfa: { totp: d.mfa.totp, recovery_codes: d.mfa.recoveryCodes, passkeys: d.mfa.passkeys },
  };
}

export function presentUserSession(s: GrantSession): z.infer<typeof UserSession> {
  return {
    session_id: s.id,
    client_id: s.clientId,
    client_name: s.clientName,
    scope: s.scope,
    auth_time: s.authTime.toISOString(),
    created_at: s.createdAt.toISOString(),
    last_used_at: s.lastUsedAt.toISOString(),
  };
}

export function presentUserConsent(c: {
  client_id: string;
  name: string;
  scopes: string[];
  updated_at: Date;
}): z.infer<typeof UserConsent> {
  return { client_id: c.client_id, client_name: c.name, scopes: c.scopes, updated_at: c.updated_at.toISOString() };
}
