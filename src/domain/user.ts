/** A user as the rest of the provider sees it: never the password hash (repositories keep that). */
export interface Address {
  formatted?: string;
  street_address?: string;
  locality?: string;
  region?: string;
  postal_code?: string;
  country?: string;
}

export interface User {
  id: string;
  platformId: string;
  email: string;
  emailVerified: boolean;
  givenName: string;
  familyName: string;
  middleName: string | null;
  nickname: string | null;
  /** Always set (a default from the name at creation); not unique. */
  preferredUsername: string;
  birthdate: string | null;
  phoneNumber: string | null;
  address: Address | null;
  pictureUrl: string | null;
  createdAt: Date;
  updatedAt: Date;
}

/** Emails are compared case-insensitively and without surrounding white space. */
export const normalizeEmail = (email: string): string => email.trim().toLowerCase();
