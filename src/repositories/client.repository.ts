import type { Queryable } from '../db';
import { invalidateUsers } from '../db/invalidation';

import {
  DEFAULT_GRANT_TYPES,
  type Client,
  type ClientLogoutAndAlgFields,
  type DynamicRegistration,
} from '../domain/client';

export type { ClientType } from '../domain/client';
/** The stored client is the domain's Client. */
export type ClientRow = Client;

const toClient = (r: any): ClientRow => ({
  id: r.id,
  platformId: r.platform_id,
  name: r.name,
  type: r.type,
  redirectUris: r.redirect_uris,
  postLogoutRedirectUris: r.post_logout_redirect_uris,
  allowedScopes: r.allowed_scopes,
  sealedSecret: r.sealed_secret,
  previousSealedSecret: r.previous_sealed_secret ?? null,
  previousSecretExpiresAt: r.previous_secret_expires_at ?? null,
  isResourceServer: r.is_resource_server,
  idTokenSignedResponseAlg: r.id_token_signed_response_alg ?? null,
  backchannelLogoutUri: r.backchannel_logout_uri ?? null,
  backchannelLogoutSessionRequired: r.backchannel_logout_session_required ?? false,
  frontchannelLogoutUri: r.frontchannel_logout_uri ?? null,
  frontchannelLogoutSessionRequired: r.frontchannel_logout_session_required ?? false,
  logoUri: r.logo_uri ?? null,
  clientUri: r.client_uri ?? null,
  policyUri: r.policy_uri ?? null,
  tosUri: r.tos_uri ?? null,
  registrationSource: r.registration_source ?? 'admin',
  metadataDocumentUrl: r.metadata_document_url ?? null,
  registration: r.registration_metadata ? toRegistration(r.application_type, r.registration_metadata) : null,
  grantTypes: r.grant_types ?? DEFAULT_GRANT_TYPES,
  jwks: r.jwks ?? null,
  jwksUri: r.jwks_uri ?? null,
  tokenExchangeResources: r.token_exchange_resources ?? [],
  lastUsedAt: r.last_used_at ?? null,
  createdAt: r.created_at,
});

const toRegistration = (applicationType: DynamicRegistration['applicationType'], m: any): DynamicRegistration => ({
  applicationType,
  tokenEndpointAuthMethod: m.token_endpoint_auth_method,
  grantTypes: m.grant_types,
  responseTypes: m.response_types,
  contacts: m.contacts ?? [],
  softwareId: m.software_id ?? null,
  softwareVersion: m.software_version ?? null,
});

/** The stored columns of a dynamic client's registration. */
const registrationColumns = (r: DynamicRegistration) => ({
  application_type: r.applicationType,
  grant_types: r.grantTypes, // what the token endpoint checks, for every client alike
  registration_metadata: JSON.stringify({
    token_endpoint_auth_method: r.tokenEndpointAuthMethod,
    grant_types: r.grantTypes,
    response_types: r.responseTypes,
    contacts: r.contacts,
    software_id: r.softwareId,
    software_version: r.softwareVersion,
  }),
});

type NewClient = Omit<
  ClientRow,
  | 'createdAt'
  | 'previousSealedSecret'
  | 'previousSecretExpiresAt'
  | 'registrationSource'
  | 'metadataDocumentUrl'
  | 'registration'
  | 'lastUsedAt'
  | ClientLogoutAndAlgFields
  | MachineClientFields
> &
  Partial<Pick<ClientRow, ClientLogoutAndAlgFields | MachineClientFields>>;

/** Fields with a default (the first two grants, no keys, no exchange), optional when a client is inserted. */
type MachineClientFields = 'grantTypes' | 'jwks' | 'jwksUri' | 'tokenExchangeResources';

const insertColumns = (c: NewClient) => ({
  id: c.id,
  platform_id: c.platformId,
  name: c.name,
  type: c.type,
  redirect_uris: c.redirectUris,
  post_logout_redirect_uris: c.postLogoutRedirectUris,
  allowed_scopes: c.allowedScopes,
  sealed_secret: c.sealedSecret,
  is_resource_server: c.isResourceServer,
  id_token_signed_response_alg: c.idTokenSignedResponseAlg ?? null,
  backchannel_logout_uri: c.backchannelLogoutUri ?? null,
  backchannel_logout_session_required: c.backchannelLogoutSessionRequired ?? false,
  frontchannel_logout_uri: c.frontchannelLogoutUri ?? null,
  frontchannel_logout_session_required: c.frontchannelLogoutSessionRequired ?? false,
  logo_uri: c.logoUri ?? null,
  client_uri: c.clientUri ?? null,
  policy_uri: c.policyUri ?? null,
  tos_uri: c.tosUri ?? null,
  grant_types: c.grantTypes ?? DEFAULT_GRANT_TYPES,
  jwks: c.jwks ? JSON.stringify(c.jwks) : null,
  jwks_uri: c.jwksUri ?? null,
  token_exchange_resources: c.tokenExchangeResources ?? [],
});

export async function insert(db: Queryable, c: NewClient): Promise<ClientRow> {
  const [row] = await db('clients').insert(insertColumns(c)).returning('*');
  return toClient(row);
}

export async function findById(db: Queryable, platformId: string, id: string): Promise<ClientRow | undefined> {
  const row = await db('clients').where({ platform_id: platformId, id }).first();
  return row && toClient(row);
}

/** A client's page of the admin list, oldest first (keyset on the millisecond creation time, then id). */
export async function listPage(
  db: Queryable,
  platformId: string,
  page: { after?: { at: string; id: string }; limit: number },
): Promise<ClientRow[]> {
  const q = db('clients')
    .where({ platform_id: platformId })
    .orderByRaw("date_trunc('milliseconds', created_at), id")
    .limit(page.limit);
  if (page.after)
    q.whereRaw("(date_trunc('milliseconds', created_at), id) > (?::timestamptz, ?)", [page.after.at, page.after.id]);
  return (await q).map(toClient);
}

export interface ClientChanges {
  name?: string;
  type?: ClientRow['type'];
  redirectUris?: string[];
  postLogoutRedirectUris?: string[];
  allowedScopes?: string[];
  sealedSecret?: string | null;
  previousSealedSecret?: string | null;
  previousSecretExpiresAt?: Date | null;
  isResourceServer?: boolean;
  idTokenSignedResponseAlg?: Client['idTokenSignedResponseAlg'];
  backchannelLogoutUri?: string | null;
  backchannelLogoutSessionRequired?: boolean;
  frontchannelLogoutUri?: string | null;
  frontchannelLogoutSessionRequired?: boolean;
  logoUri?: string | null;
  clientUri?: string | null;
  policyUri?: string | null;
  tosUri?: string | null;
  registration?: DynamicRegistration;
  grantTypes?: Client['grantTypes'];
  jwks?: Client['jwks'];
  jwksUri?: string | null;
  tokenExchangeResources?: string[];
}

export async function update(db: Queryable, platformId: string, id: string, c: ClientChanges): Promise<ClientRow> {
  const columns: Record<string, unknown> = {};
  if (c.name !== undefined) columns.name = c.name;
  if (c.type !== undefined) columns.type = c.type;
  if (c.redirectUris !== undefined) columns.redirect_uris = c.redirectUris;
  if (c.postLogoutRedirectUris !== undefined) columns.post_logout_redirect_uris = c.postLogoutRedirectUris;
  if (c.allowedScopes !== undefined) columns.allowed_scopes = c.allowedScopes;
  if (c.sealedSecret !== undefined) columns.sealed_secret = c.sealedSecret;
  if (c.previousSealedSecret !== undefined) columns.previous_sealed_secret = c.previousSealedSecret;
  if (c.previousSecretExpiresAt !== undefined) columns.previous_secret_expires_at = c.previousSecretExpiresAt;
  if (c.isResourceServer !== undefined) columns.is_resource_server = c.isResourceServer;
  if (c.idTokenSignedResponseAlg !== undefined) columns.id_token_signed_response_alg = c.idTokenSignedResponseAlg;
  if (c.backchannelLogoutUri !== undefined) columns.backchannel_logout_uri = c.backchannelLogoutUri;
  if (c.backchannelLogoutSessionRequired !== undefined)
    columns.backchannel_logout_session_required = c.backchannelLogoutSessionRequired;
  if (c.frontchannelLogoutUri !== undefined) columns.frontchannel_logout_uri = c.frontchannelLogoutUri;
  if (c.frontchannelLogoutSessionRequired !== undefined)
    columns.frontchannel_logout_session_required = c.frontchannelLogoutSessionRequired;
  if (c.logoUri !== undefined) columns.logo_uri = c.logoUri;
  if (c.clientUri !== undefined) columns.client_uri = c.clientUri;
  if (c.policyUri !== undefined) columns.policy_uri = c.policyUri;
  if (c.tosUri !== undefined) columns.tos_uri = c.tosUri;
  if (c.registration !== undefined) Object.assign(columns, registrationColumns(c.registration));
  if (c.grantTypes !== undefined) columns.grant_types = c.grantTypes;
  if (c.jwks !== undefined) columns.jwks = c.jwks ? JSON.stringify(c.jwks) : null;
  if (c.jwksUri !== undefined) columns.jwks_uri = c.jwksUri;
  if (c.tokenExchangeResources !== undefined) columns.token_exchange_resources = c.tokenExchangeResources;
  const [row] = await db('clients').where({ platform_id: platformId, id }).update(columns).returning('*');
  return toClient(row);
}

/**
 * Deletes a client with everything issued to it: codes, device authorizations, refresh-token
 * families (their tokens cascade), the lineage of tokens exchanged by it, and consents. Its access
 * tokens live by those grants or by the client itself (docs/decisions.md, "Access tokens without a
 * row"), so they die with them, as do tokens exchanged from them. Explicit rather than left to ON
 * DELETE CASCADE, so the users whose cached access tokens die are known (this process drops them at
 * once; others by NOTIFY).
 */
export async function deleteWithGrants(
  db: Queryable,
  platformId: string,
  id: string,
): Promise<{ refreshFamilies: number; consents: number; codes: number; deviceAuthorizations: number }> {
  const users: (string | null)[] = [];
  const remove = async (table: string) => {
    const rows: { user_id: string | null }[] = await db(table).where({ client_id: id }).del().returning('user_id');
    users.push(...rows.map((r) => r.user_id));
    return rows.length;
  };
  await remove('exchanged_access_tokens');
  const refreshFamilies = await remove('refresh_token_families');
  const codes = await remove('authorization_codes');
  const deviceAuthorizations = await remove('device_authorizations');
  const consents = await db('consents').where({ client_id: id }).del();
  await db('clients').where({ platform_id: platformId, id }).del();
  invalidateUsers(users);
  return { refreshFamilies, consents, codes, deviceAuthorizations };
}

/**
 * A client that registered itself (RFC 7591): the operator's fields as insert() takes them, its
 * registration and the digest of its registration access token (RFC 7592).
 */
export async function insertDynamic(
  db: Queryable,
  c: Parameters<typeof insert>[1] & {
    registration: DynamicRegistration;
    registrationAccessTokenHash: string;
    createdAt: Date;
  },
): Promise<ClientRow> {
  const { registration, registrationAccessTokenHash, createdAt, ...fields } = c;
  const inserted = await insert(db, fields);
  // created_at by the service's clock: it is client_id_issued_at, and the purge of unused clients counts from it.
  const [row] = await db('clients')
    .where({ id: inserted.id })
    .update({
      registration_source: 'dynamic',
      registration_access_token_hash: registrationAccessTokenHash,
      created_at: createdAt,
      ...registrationColumns(registration),
    })
    .returning('*');
  return toClient(row);
}

/** The digest of a dynamic client's registration access token; undefined for an operator's client or none. */
export async function findRegistrationAccessTokenHash(
  db: Queryable,
  platformId: string,
  id: string,
): Promise<string | undefined> {
  const row = await db('clients')
    .where({ platform_id: platformId, id, registration_source: 'dynamic' })
    .first('registration_access_token_hash');
  return row?.registration_access_token_hash ?? undefined;
}

/** Marks the first completed token request; one conditional UPDATE that matches nothing once it is set. */
export async function markFirstUse(db: Queryable, id: string, at: Date): Promise<void> {
  await db('clients').where({ id }).whereNull('last_used_at').update({ last_used_at: at });
}

/** The stored client of a platform named by a Client ID Metadata Document at `url`. */
export async function findByMetadataDocumentUrl(
  db: Queryable,
  platformId: string,
  url: string,
): Promise<ClientRow | undefined> {
  const row = await db('clients').where({ platform_id: platformId, metadata_document_url: url }).first();
  return row && toClient(row);
}

/**
 * The first row of a client named by its metadata document: a public client under a new id, its
 * URL beside it. Undefined when another request stored the same (platform, URL) first (the
 * partial unique index on both refuses the second row; ON CONFLICT keeps that from being an error).
 */
export async function insertMetadataDocumentClient(
  db: Queryable,
  c: NewClient & { metadataDocumentUrl: string; createdAt: Date },
): Promise<ClientRow | undefined> {
  const [row] = await db('clients')
    .insert({
      ...insertColumns(c),
      registration_source: 'metadata_document',
      metadata_document_url: c.metadataDocumentUrl,
      // by the service's clock: the purge of unused clients counts from it
      created_at: c.createdAt,
    })
    .onConflict()
    .ignore()
    .returning('*');
  return row && toClient(row);
}
