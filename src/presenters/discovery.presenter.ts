import { SUPPORTED_LOCALES } from '../domain/locales';
import { SUPPORTED_SCOPES } from '../domain/scopes';
import { ACR_VALUES_SUPPORTED } from '../domain/mfa';
import { GRANT_TYPES, DEFAULT_GRANT_TYPES, ID_TOKEN_ALGS } from '../domain/client';
import { issuerOf, type Platform } from '../domain/platform';
import { CLIENT_ASSERTION_ALGS } from '../domain/client-assertion';

/**
 * The spec's discovery document; a seed platform's endpoint URLs carry ?platform_guid=G (the
 * spec's interface). A standard platform's names its own issuer and ID-token algorithms, and lists
 * its endpoints under the issuer without a query, so a client may append its own
 * (docs/decisions.md, "Agent-ready authorization").
 */
export function presentDiscovery(
  baseUrl: string,
  platform: Pick<Platform, 'id' | 'signingProfile' | 'registration' | 'clientMetadataDocuments'>,
) {
  const issuer = issuerOf(baseUrl, platform);
  const at =
    platform.signingProfile === 'standard'
      ? (path: string) => `${issuer}${path}`
      : (path: string) => `${baseUrl}${path}?platform_guid=${encodeURIComponent(platform.id)}`;
  return {
    issuer,
    authorization_endpoint: at('/oauth/authorize'),
    token_endpoint: at('/oauth/token'),
    userinfo_endpoint: at('/oauth/userinfo'),
    jwks_uri: at('/oauth/jwks'),
    introspection_endpoint: at('/oauth/introspect'),
    revocation_endpoint: at('/oauth/revoke'),
    end_session_endpoint: at('/oauth/logout'),
    ...registrationEndpoint(baseUrl, platform),
    ...deviceAuthorizationEndpoint(baseUrl, platform),
    scopes_supported: [...SUPPORTED_SCOPES],
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: grantTypesSupported(platform),
    code_challenge_methods_supported: ['S256'],
    ...clientAuthMethods(platform),
    id_token_signing_alg_values_supported: platform.signingProfile === 'standard' ? [...ID_TOKEN_ALGS] : ['HS512'],
    subject_types_supported: ['public'],
    claims_supported: [
      'sub',
      'human_guid',
      'iss',
      'aud',
      'exp',
      'iat',
      'auth_time',
      'nonce',
      'at_hash',
      'azp',
      'amr',
      'acr',
      'sid',
      'name',
      'given_name',
      'family_name',
      'middle_name',
      'nickname',
      'preferred_username',
      'birthdate',
      'picture',
      'updated_at',
      'email',
      'email_verified',
      'phone_number',
      'phone_number_verified',
      'address',
    ],
    prompt_values_supported: ['none', 'login', 'consent', 'select_account'],
    // An addition to the spec's document.
    acr_values_supported: [...ACR_VALUES_SUPPORTED],
    // The languages of the hosted pages and mails (OIDC Discovery 1.0 §3).
    ui_locales_supported: [...SUPPORTED_LOCALES],
    claims_parameter_supported: false,
    request_parameter_supported: false,
    request_uri_parameter_supported: false,
    authorization_response_iss_parameter_supported: true,
    // Both profiles: OIDC Back-Channel Logout 1.0 §2.1, Front-Channel Logout 1.0 §3.
    backchannel_logout_supported: true,
    backchannel_logout_session_supported: true,
    frontchannel_logout_supported: true,
    frontchannel_logout_session_supported: true,
    ...metadataDocumentsSupported(platform),
  };
}

/**
 * How clients authenticate at the token, introspection and revocation endpoints (RFC 8414 §2). A
 * standard platform adds private_key_jwt (RFC 7523) with the algorithms it accepts; a seed
 * platform's members are the spec's, in the spec's order.
 */
function clientAuthMethods(platform: Pick<Platform, 'signingProfile'>) {
  if (platform.signingProfile !== 'standard')
    return {
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
      introspection_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
      revocation_endpoint_auth_methods_supported: ['none', 'client_secret_basic', 'client_secret_post'],
    };
  const algs = [...CLIENT_ASSERTION_ALGS];
  return {
    token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none', 'private_key_jwt'],
    token_endpoint_auth_signing_alg_values_supported: algs,
    introspection_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'private_key_jwt'],
    introspection_endpoint_auth_signing_alg_values_supported: algs,
    revocation_endpoint_auth_methods_supported: [
      'none',
      'client_secret_basic',
      'client_secret_post',
      'private_key_jwt',
    ],
    revocation_endpoint_auth_signing_alg_values_supported: algs,
  };
}

/**
 * draft-ietf-oauth-client-id-metadata-document, its server metadata member: a standard platform whose policy accepts some
 * client ID metadata documents says so; the others (and every seed platform) have no such member.
 */
function metadataDocumentsSupported(platform: Pick<Platform, 'signingProfile' | 'clientMetadataDocuments'>) {
  if (platform.signingProfile !== 'standard' || platform.clientMetadataDocuments === 'off') return {};
  return { client_id_metadata_document_supported: true };
}

/**
 * RFC 8414 §2 / RFC 7591 §3: a standard platform that accepts registrations names its endpoint
 * under its issuer; otherwise (and on every seed platform) the document has no such member.
 */
function registrationEndpoint(baseUrl: string, platform: Pick<Platform, 'id' | 'signingProfile' | 'registration'>) {
  if (platform.signingProfile !== 'standard' || platform.registration === 'off') return {};
  return { registration_endpoint: `${issuerOf(baseUrl, platform)}/oauth/register` };
}

/** RFC 8628 §4: a standard platform's device authorization endpoint, under its issuer; a seed platform has none. */
function deviceAuthorizationEndpoint(baseUrl: string, platform: Pick<Platform, 'id' | 'signingProfile'>) {
  if (platform.signingProfile !== 'standard') return {};
  return { device_authorization_endpoint: `${issuerOf(baseUrl, platform)}/oauth/device_authorization` };
}

/**
 * RFC 8414 §2: a standard platform's token endpoint also answers client credentials (RFC 6749 §4.4),
 * the device code (RFC 8628 §4) and token exchange (RFC 8693) for the clients allowed them; a seed
 * platform's lists the spec's two.
 */
function grantTypesSupported(platform: Pick<Platform, 'signingProfile'>): string[] {
  return platform.signingProfile === 'standard' ? [...GRANT_TYPES] : [...DEFAULT_GRANT_TYPES];
}
