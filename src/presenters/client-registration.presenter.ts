import type { ClientInformation } from '../domain/client';
import { formatScope } from '../domain/scopes';

/**
 * The client information response (RFC 7591 §3.2.1, RFC 7592 §3): the registered metadata as
 * stored (the server may have narrowed it, e.g. the scope), the client's credentials, and where
 * and with what it manages its registration.
 */
export function presentClientInformation(info: ClientInformation, registrationClientUri: string) {
  const { client, secret } = info;
  const r = client.registration!;
  const optional = (field: string, value: string | null) => (value === null ? {} : { [field]: value });
  return {
    client_id: client.id,
    client_id_issued_at: Math.floor(client.createdAt.getTime() / 1000),
    ...(secret === null ? {} : { client_secret: secret, client_secret_expires_at: 0 }),
    registration_access_token: info.registrationAccessToken,
    registration_client_uri: registrationClientUri,
    client_name: client.name,
    redirect_uris: client.redirectUris,
    token_endpoint_auth_method: r.tokenEndpointAuthMethod,
    grant_types: r.grantTypes,
    response_types: r.responseTypes,
    application_type: r.applicationType,
    scope: formatScope(client.allowedScopes),
    ...optional('client_uri', client.clientUri),
    ...optional('logo_uri', client.logoUri),
    ...optional('tos_uri', client.tosUri),
    ...optional('policy_uri', client.policyUri),
    ...(r.contacts.length ? { contacts: r.contacts } : {}),
    ...optional('software_id', r.softwareId),
    ...optional('software_version', r.softwareVersion),
  };
}
