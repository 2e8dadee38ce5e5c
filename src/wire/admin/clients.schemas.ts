import { z } from 'zod';
import {
  CLIENT_SECRET_OVERLAP_MAX_SECONDS,
  DEFAULT_GRANT_TYPES,
  GRANT_TYPES,
  ID_TOKEN_ALGS,
} from '../../domain/client';
import { pageOf, Timestamp, Uuid } from './common.schemas';
import { ClientMetadata } from './branding.schemas';

const Name = z.string().trim().min(1, 'must not be empty').max(200, 'must be at most 200 characters');
const Type = z.enum(['confidential', 'public'], { error: 'client type must be "confidential" or "public"' });
const Uri = z.string().max(2000, 'must be at most 2000 characters');
const Uris = z.array(Uri).max(100, 'at most 100 URIs');
const Scopes = z
  .string()
  .max(500, 'must be at most 500 characters')
  .meta({ description: 'Space-separated; must include openid', example: 'openid profile email offline_access' });

const IdTokenAlg = z.enum(ID_TOKEN_ALGS, {
  error: `must be one of ${ID_TOKEN_ALGS.join(', ')} (or null: the default)`,
});
const IdTokenAlgInput = IdTokenAlg.nullable().meta({
  description:
    'Standard platforms only: RS256 (the default, null), ES256, EdDSA, or HS512 keyed with the client secret (confidential clients). null clears it',
});
const LogoutUri = Uri.nullable();
const BackchannelLogoutUri = LogoutUri.meta({
  description:
    'OIDC Back-Channel Logout: where logout tokens are POSTed. Absolute http(s), no fragment; https in production except on a loopback host. null or "" clears it',
});
const FrontchannelLogoutUri = LogoutUri.meta({
  description:
    'OIDC Front-Channel Logout: loaded in an iframe at sign-out. Absolute http(s), no fragment; https in production except on a loopback host. null or "" clears it',
});
const BackchannelSessionRequired = z.boolean().meta({ description: 'Logout tokens must carry sid (default false)' });
const FrontchannelSessionRequired = z
  .boolean()
  .meta({ description: 'The front-channel URI gets iss and sid query parameters (default false)' });

const GrantTypes = z
  .array(z.string().max(100, 'must be at most 100 characters'))
  .max(10, 'at most 10 grant types')
  .meta({
    description: `The grants the client may use (default: ${DEFAULT_GRANT_TYPES.join(', ')}). Standard platforms: any of ${GRANT_TYPES.join(', ')}; client_credentials and token exchange need a confidential client`,
  });
const Jwks = z
  .object({ keys: z.array(z.record(z.string(), z.unknown())) })
  .nullable()
  .meta({
    description:
      'RFC 7517 JWK Set of the public keys the client signs its private_key_jwt assertions with (confidential only; replaces its secret). null clears it',
  });
const JwksUri = Uri.nullable().meta({
  description:
    'Where the client publishes its JWK Set (https; fetched through the outbound guard). Makes it authenticate with private_key_jwt. null or "" clears it',
});
const TokenExchangeResources = z.array(Uri).max(50, 'at most 50 resources').meta({
  description:
    'RFC 8693: the resource identifiers the client may exchange access tokens for (needs the token-exchange grant). Replaces the list',
});

export const ClientParams = z.object({
  platform_guid: Uuid.meta({ description: 'The platform' }),
  client_id: Uuid.meta({ description: 'The client' }),
});

export const Client = z
  .object({
    client_id: Uuid,
    platform_guid: Uuid,
    name: z.string(),
    type: z.enum(['confidential', 'public']),
    redirect_uris: z.array(z.string()),
    post_logout_redirect_uris: z.array(z.string()),
    scopes: z.string().meta({ description: 'Space-separated scopes the client may ask for' }),
    is_resource_server: z
      .boolean()
      .meta({ description: "May introspect the platform's other clients' tokens (confidential only)" }),
    previous_secret_expires_at: Timestamp.nullable().meta({
      description: 'After a secret rotation: until when the previous secret still works (null: no overlap running)',
    }),
    id_token_signed_response_alg: IdTokenAlg.nullable().meta({
      description:
        'Standard platforms: the ID-token algorithm (null: RS256, the default); seed platforms sign every ID token HS512',
    }),
    backchannel_logout_uri: z.string().nullable(),
    backchannel_logout_session_required: z.boolean(),
    frontchannel_logout_uri: z.string().nullable(),
    frontchannel_logout_session_required: z.boolean(),
    logo_uri: z.string().nullable().meta({ description: "RFC 7591: the client's logo, shown on consent" }),
    client_uri: z.string().nullable().meta({ description: "RFC 7591: the client's home page" }),
    policy_uri: z.string().nullable().meta({ description: "RFC 7591: the client's privacy policy" }),
    tos_uri: z.string().nullable().meta({ description: "RFC 7591: the client's terms of service" }),
    grant_types: z.array(z.string()).meta({ description: 'The grants the client may use' }),
    token_endpoint_auth_method: z.enum(['none', 'client_secret_basic', 'private_key_jwt']).meta({
      description:
        'How it authenticates: none (public), client_secret_basic (its secret, by Basic or in the body), private_key_jwt (its keys)',
    }),
    jwks: z.object({ keys: z.array(z.record(z.string(), z.unknown())) }).nullable(),
    jwks_uri: z.string().nullable(),
    token_exchange_resources: z.array(z.string()),
    registration_source: z.enum(['admin', 'dynamic', 'metadata_document']).meta({
      description:
        'admin: made by an operator; dynamic: registered itself (RFC 7591); metadata_document: named by a Client ID Metadata Document',
    }),
    metadata_document_url: z.string().nullable().meta({
      description: 'metadata_document clients: the URL of the document, the client_id it uses on the wire',
    }),
    created_at: Timestamp,
  })
  .meta({ id: 'Client' });

export const ClientPage = pageOf(Client, 'ClientPage');

export const ClientCreate = z
  .object({
    name: Name,
    type: Type,
    redirect_uris: Uris.optional().meta({
      description: 'At least one when the client has the authorization_code grant',
    }),
    post_logout_redirect_uris: Uris.optional(),
    scopes: Scopes.optional().meta({
      description: 'Space-separated; must include openid when the client has the authorization_code grant',
    }),
    is_resource_server: z.boolean().optional(),
    id_token_signed_response_alg: IdTokenAlgInput.optional(),
    backchannel_logout_uri: BackchannelLogoutUri.optional(),
    backchannel_logout_session_required: BackchannelSessionRequired.optional(),
    frontchannel_logout_uri: FrontchannelLogoutUri.optional(),
    frontchannel_logout_session_required: FrontchannelSessionRequired.optional(),
    logo_uri: ClientMetadata.logo_uri.optional(),
    client_uri: ClientMetadata.client_uri.optional(),
    policy_uri: ClientMetadata.policy_uri.optional(),
    tos_uri: ClientMetadata.tos_uri.optional(),
    grant_types: GrantTypes.optional(),
    jwks: Jwks.optional(),
    jwks_uri: JwksUri.optional(),
    token_exchange_resources: TokenExchangeResources.optional(),
  })
  .strict()
  .superRefine((b, ctx) => {
    // A browser client needs somewhere to come back to; a service or a device does not.
    if ((b.grant_types ?? DEFAULT_GRANT_TYPES).includes('authorization_code') && !b.redirect_uris?.length)
      ctx.addIssue({ code: 'custom', path: ['redirect_uris'], message: 'at least one redirect URI is required' });
  })
  .meta({ id: 'ClientCreate' });

export const ClientUpdate = z
  .object({
    name: Name.optional(),
    type: Type.optional(),
    redirect_uris: Uris.min(1, 'at least one redirect URI is required')
      .optional()
      .meta({ description: 'Replaces the list' }),
    post_logout_redirect_uris: Uris.optional().meta({ description: 'Replaces the list' }),
    scopes: Scopes.optional(),
    is_resource_server: z.boolean().optional(),
    id_token_signed_response_alg: IdTokenAlgInput.optional(),
    backchannel_logout_uri: BackchannelLogoutUri.optional(),
    backchannel_logout_session_required: BackchannelSessionRequired.optional(),
    frontchannel_logout_uri: FrontchannelLogoutUri.optional(),
    frontchannel_logout_session_required: FrontchannelSessionRequired.optional(),
    logo_uri: ClientMetadata.logo_uri.optional(),
    client_uri: ClientMetadata.client_uri.optional(),
    policy_uri: ClientMetadata.policy_uri.optional(),
    tos_uri: ClientMetadata.tos_uri.optional(),
    grant_types: GrantTypes.optional(),
    jwks: Jwks.optional(),
    jwks_uri: JwksUri.optional(),
    token_exchange_resources: TokenExchangeResources.optional(),
  })
  .strict()
  .refine((b) => Object.keys(b).length > 0, 'give at least one field to change')
  .meta({
    id: 'ClientUpdate',
    description:
      'The same rules as creation; public → confidential issues a secret (shown once), confidential → public drops it',
  });

export const ClientSecretRotate = z
  .object({
    overlap_seconds: z
      .number()
      .int('must be a whole number')
      .min(0, 'must be at least 0')
      .max(CLIENT_SECRET_OVERLAP_MAX_SECONDS, `must be at most ${CLIENT_SECRET_OVERLAP_MAX_SECONDS}`)
      .optional()
      .meta({
        description:
          'How long the previous secret keeps working (default CLIENT_SECRET_OVERLAP_SECONDS; 0: not at all)',
      }),
  })
  .strict()
  .meta({ id: 'ClientSecretRotate' });

const Secret = z.string().meta({ description: 'The client secret: shown this once, never again' });

export const ClientCreated = Client.extend({ client_secret: Secret.nullable() }).meta({
  id: 'ClientCreated',
  description: 'client_secret is null for a public client',
});
export const ClientUpdated = Client.extend({ client_secret: Secret.optional() }).meta({
  id: 'ClientUpdated',
  description: 'client_secret only when the change made the client confidential',
});
export const ClientSecretRotated = Client.extend({ client_secret: Secret }).meta({ id: 'ClientSecretRotated' });
