import { z } from 'zod';
import { CLIENT_SECRET_OVERLAP_MAX_SECONDS, ID_TOKEN_ALGS } from '../../domain/client';
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
    created_at: Timestamp,
  })
  .meta({ id: 'Client' });

export const ClientPage = pageOf(Client, 'ClientPage');

export const ClientCreate = z
  .object({
    name: Name,
    type: Type,
    redirect_uris: Uris.min(1, 'at least one redirect URI is required'),
    post_logout_redirect_uris: Uris.optional(),
    scopes: Scopes,
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
  })
  .strict()
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
