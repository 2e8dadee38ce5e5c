export type ClientType = 'confidential' | 'public';

/** A registered application of a platform (DESIGN §5). The secret is sealed (never in clear). */
export interface Client {
  id: string;
  platformId: string;
  name: string;
  type: ClientType;
  redirectUris: string[];
  postLogoutRedirectUris: string[];
  allowedScopes: string[];
  sealedSecret: string | null;
  /** After a rotation: the secret before it, sealed, still accepted until previousSecretExpiresAt. */
  previousSealedSecret: string | null;
  previousSecretExpiresAt: Date | null;
  /** May introspect tokens issued to the platform's other clients (RFC 7662 §4). */
  isResourceServer: boolean;
  createdAt: Date;
}

/** The longest a rotated-out client secret may keep working: 30 days. */
export const CLIENT_SECRET_OVERLAP_MAX_SECONDS = 2_592_000;
