import type { z } from 'zod';
import type { Client as ClientShape } from '../../wire/admin/clients.schemas';
import { tokenEndpointAuthMethodOf, type Client } from '../../domain/client';

/** A client as the admin API shows it: never its secret (that leaves only where a schema adds client_secret). */
export function presentClient(c: Client): z.infer<typeof ClientShape> {
  return {
    client_id: c.id,
    platform_guid: c.platformId,
    name: c.name,
    type: c.type,
    redirect_uris: c.redirectUris,
    post_logout_redirect_uris: c.postLogoutRedirectUris,
    scopes: c.allowedScopes.join(' '),
    is_resource_server: c.isResourceServer,
    previous_secret_expires_at: c.previousSecretExpiresAt ? c.previousSecretExpiresAt.toISOString() : null,
    id_token_signed_response_alg: c.idTokenSignedResponseAlg,
    backchannel_logout_uri: c.backchannelLogoutUri,
    backchannel_logout_session_required: c.backchannelLogoutSessionRequired,
    frontchannel_logout_uri: c.frontchannelLogoutUri,
    frontchannel_logout_session_required: c.frontchannelLogoutSessionRequired,
    logo_uri: c.logoUri,
    client_uri: c.clientUri,
    policy_uri: c.policyUri,
    tos_uri: c.tosUri,
    grant_types: c.grantTypes,
    token_endpoint_auth_method: tokenEndpointAuthMethodOf(c),
    jwks: c.jwks,
    jwks_uri: c.jwksUri,
    token_exchange_resources: c.tokenExchangeResources,
    registration_source: c.registrationSource,
    metadata_document_url: c.metadataDocumentUrl,
    created_at: c.createdAt.toISOString(),
  };
}
