import type { ClientBranding } from './branding';

export type ClientType = 'confidential' | 'public';

/** A registered application of a platform. The secret is sealed (never in clear). */
export interface Client extends ClientBranding {
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
  /** Standard platforms: RS256 (null, the default), ES256, EdDSA, or HS512 keyed with the secret (confidential only). Seed platforms ignore it. */
  idTokenSignedResponseAlg: IdTokenAlg | null;
  /** OIDC Back-Channel Logout 1.0 §2.2: where logout tokens are POSTed, and whether they must carry `sid`. */
  backchannelLogoutUri: string | null;
  backchannelLogoutSessionRequired: boolean;
  /** OIDC Front-Channel Logout 1.0 §2: rendered in an iframe on sign-out, with `iss` and `sid` when required. */
  frontchannelLogoutUri: string | null;
  frontchannelLogoutSessionRequired: boolean;
  createdAt: Date;
}

/** The ID-token algorithms a client of a standard platform may register. */
export const ID_TOKEN_ALGS = ['RS256', 'ES256', 'EdDSA', 'HS512'] as const;
export type IdTokenAlg = (typeof ID_TOKEN_ALGS)[number];

/** The client's registration fields that have a default, optional when a client is created. */
export type ClientLogoutAndAlgFields = 'idTokenSignedResponseAlg' | 'backchannelLogoutUri' | 'backchannelLogoutSessionRequired' | 'frontchannelLogoutUri' | 'frontchannelLogoutSessionRequired' | keyof ClientBranding;

/** The longest a rotated-out client secret may keep working: 30 days. */
export const CLIENT_SECRET_OVERLAP_MAX_SECONDS = 2_592_000;
