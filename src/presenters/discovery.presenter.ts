import { SUPPORTED_SCOPES } from '../domain/scopes';

import { ACR_VALUES_SUPPORTED } from '../domain/mfa';

/** The spec's discovery document; every endpoint URL carries ?platform_guid=G (DESIGN §4). */
export function presentDiscovery(baseUrl: string, platformId: string) {
  const at = (path: string) => `${baseUrl}${path}?platform_guid=${encodeURIComponent(platformId)}`;
  return {
    issuer: baseUrl,
    authorization_endpoint: at('/oauth/authorize'),
    token_endpoint: at('/oauth/token'),
    userinfo_endpoint: at('/oauth/userinfo'),
    jwks_uri: at('/oauth/jwks'),
    introspection_endpoint: at('/oauth/introspect'),
    revocation_endpoint: at('/oauth/revoke'),
    end_session_endpoint: at('/oauth/logout'),
    scopes_supported: [...SUPPORTED_SCOPES],
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
    introspection_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
    revocation_endpoint_auth_methods_supported: ['none', 'client_secret_basic', 'client_secret_post'],
    id_token_signing_alg_values_supported: ['HS512'],
    subject_types_supported: ['public'],
    claims_supported: [
      'sub', 'human_guid', 'iss', 'aud', 'exp', 'iat', 'auth_time', 'nonce', 'at_hash', 'azp', 'amr', 'acr',
      'name', 'given_name', 'family_name', 'middle_name', 'nickname', 'preferred_username', 'birthdate',
      'picture', 'updated_at', 'email', 'email_verified', 'phone_number', 'phone_number_verified', 'address',
    ],
    prompt_values_supported: ['none', 'login', 'consent', 'select_account'],
    // DESIGN §15 (issue 13): an addition to the spec's document.
    acr_values_supported: [...ACR_VALUES_SUPPORTED],
    claims_parameter_supported: false,
    request_parameter_supported: false,
    request_uri_parameter_supported: false,
    authorization_response_iss_parameter_supported: true,
  };
}
