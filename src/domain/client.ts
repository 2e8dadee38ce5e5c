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
  /** admin: made by an operator; dynamic: registered itself (RFC 7591); metadata_document: its id is the URL of its Client ID Metadata Document. */
  registrationSource: RegistrationSource;
  /** metadata_document clients: the URL of the document, their client_id on the wire (the stored id stays a UUID); null for the others. */
  metadataDocumentUrl: string | null;
  /** Dynamic clients: what they registered that only they read back (RFC 7591 §2); null for an operator's. */
  registration: DynamicRegistration | null;
  /** The grants it may use at the token endpoint (RFC 7591 §2 grant_types); a seed platform's clients only the first two. */
  grantTypes: GrantType[];
  /** RFC 7523 / RFC 7591 §2: its public keys, inline or at a URL; either one makes it authenticate with private_key_jwt only. */
  jwks: ClientJwks | null;
  jwksUri: string | null;
  /** RFC 8693: the resources (identifier URIs) it may exchange an access token for; empty unless it has the token-exchange grant. */
  tokenExchangeResources: string[];
  /** When it first completed a token request; a dynamic client that never does is purged. */
  lastUsedAt: Date | null;
  createdAt: Date;
}

export type RegistrationSource = 'admin' | 'dynamic' | 'metadata_document';

/**
 * The client_id the client is known by outside the server (authorize and token requests, ID and
 * access tokens, introspection, logout): its metadata document's URL when it has one, else its
 * stored id. Inside, codes, tokens, consents and audit events reference the stored id.
 */
export const wireClientId = (client: Pick<Client, 'id' | 'metadataDocumentUrl'>): string =>
  client.metadataDocumentUrl ?? client.id;

/**
 * Registered itself, with no operator vouching for its name, logo or addresses: by RFC 7591
 * (`dynamic`) or named by a Client ID Metadata Document (`metadata_document`). Consent for
 * such a client is never skipped by policy and says so (docs/decisions.md, "Agent-ready authorization").
 */
export const isSelfRegistered = (client: Pick<Client, 'registrationSource'>): boolean =>
  client.registrationSource !== 'admin';

/**
 * Whether a self-registered client now differs in what its consent page showed: its name, logo,
 * home page or redirect URIs. A remembered consent was for those; a change asks again.
 */
export function shownOnConsentChanged(before: Client, after: Client): boolean {
  const shown = (c: Client) => [c.name, c.logoUri, c.clientUri, [...c.redirectUris].sort()];
  return JSON.stringify(shown(before)) !== JSON.stringify(shown(after));
}

/** What the consent page tells of a self-registered client besides its branding. */
export interface SelfRegisteredClient {
  /** The home page it registered (RFC 7591 §2 client_uri), if any. */
  clientUri: string | null;
  /** Every registered redirect URI is a loopback address: the app runs on the person's own device. */
  redirectsOnlyToThisDevice: boolean;
}

/** RFC 8252 §8.4 via RFC 7591 §2 / OIDC Registration §2: which redirect URIs the client may register. */
export const APPLICATION_TYPES = ['web', 'native'] as const;
export type ApplicationType = (typeof APPLICATION_TYPES)[number];

export const REGISTRATION_AUTH_METHODS = ['none', 'client_secret_basic', 'client_secret_post'] as const;
export type RegistrationAuthMethod = (typeof REGISTRATION_AUTH_METHODS)[number];

/** The grant types a client may register for now (RFC 7591 §2). */
export const REGISTRABLE_GRANT_TYPES = ['authorization_code', 'refresh_token'] as const;
export type RegistrableGrantType = (typeof REGISTRABLE_GRANT_TYPES)[number];

/** Every grant type a standard platform's client may be allowed (docs/decisions.md, "Machine and device clients"). */
export const DEVICE_CODE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';
export const TOKEN_EXCHANGE_GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange';
export const GRANT_TYPES = [
  'authorization_code',
  'refresh_token',
  'client_credentials',
  DEVICE_CODE_GRANT,
  TOKEN_EXCHANGE_GRANT,
] as const;
export type GrantType = (typeof GRANT_TYPES)[number];
/** What a client is allowed when nothing is said, and all a seed platform's client may be. */
export const DEFAULT_GRANT_TYPES: GrantType[] = ['authorization_code', 'refresh_token'];
/** Grants that act without a person at a browser and so need the client to prove itself. */
export const CONFIDENTIAL_ONLY_GRANTS: readonly GrantType[] = ['client_credentials', TOKEN_EXCHANGE_GRANT];

export const isGrantType = (g: string): g is GrantType => (GRANT_TYPES as readonly string[]).includes(g);

/** A JWK Set as a client registers it (RFC 7517 §5): public keys only. */
export interface ClientJwks {
  keys: Array<Record<string, unknown>>;
}

/** RFC 7591 §2 token_endpoint_auth_method as the client stands: keys → private_key_jwt; a secret (Basic or POST) → client_secret_basic; else none. */
export type TokenEndpointAuthMethod = 'none' | 'client_secret_basic' | 'private_key_jwt';
export const tokenEndpointAuthMethodOf = (c: Pick<Client, 'type' | 'jwks' | 'jwksUri'>): TokenEndpointAuthMethod =>
  c.type === 'public' ? 'none' : c.jwks || c.jwksUri ? 'private_key_jwt' : 'client_secret_basic';

/** The RFC 7591 §2 metadata of a self-registered client that has no column of its own. */
export interface DynamicRegistration {
  applicationType: ApplicationType;
  tokenEndpointAuthMethod: RegistrationAuthMethod;
  grantTypes: RegistrableGrantType[];
  responseTypes: ['code'];
  contacts: string[];
  softwareId: string | null;
  softwareVersion: string | null;
}

/** The ID-token algorithms a client of a standard platform may register. */
export const ID_TOKEN_ALGS = ['RS256', 'ES256', 'EdDSA', 'HS512'] as const;
export type IdTokenAlg = (typeof ID_TOKEN_ALGS)[number];

/** The client's registration fields that have a default, optional when a client is created. */
export type ClientLogoutAndAlgFields =
  | 'idTokenSignedResponseAlg'
  | 'backchannelLogoutUri'
  | 'backchannelLogoutSessionRequired'
  | 'frontchannelLogoutUri'
  | 'frontchannelLogoutSessionRequired'
  | keyof ClientBranding;

/** The longest a rotated-out client secret may keep working: 30 days. */
export const CLIENT_SECRET_OVERLAP_MAX_SECONDS = 2_592_000;

/** A dynamic client as its registration answers it (RFC 7591 §3.2.1, RFC 7592 §3): the secret in clear, the registration access token. */
export interface ClientInformation {
  client: Client;
  secret: string | null;
  registrationAccessToken: string;
}
