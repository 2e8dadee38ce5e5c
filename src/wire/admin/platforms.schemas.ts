import { z } from 'zod';
import { MFA_POLICIES } from '../../domain/mfa';
import {
  parseClientMetadataDocuments,
  RATE_LIMITED_ENDPOINTS,
  REGISTRATION_POLICIES,
  SIGNING_PROFILES,
} from '../../domain/platform';
import { pageOf, Timestamp, Uuid } from './common.schemas';
import { AccentColor, LogoUrl, SupportEmail } from './branding.schemas';

const SigningProfile = z.enum(SIGNING_PROFILES).meta({
  description:
    "seed: the spec's HS512 tokens and oct descriptors (default, unchanged); standard: asymmetric keys (RS256, ES256, EdDSA) and a JWKS of public keys",
});

const Registration = z.enum(REGISTRATION_POLICIES).meta({
  description:
    'Standard platforms: RFC 7591 dynamic client registration at {issuer}/oauth/register. off (default): no endpoint; token: with an initial access token (registration-tokens); open: anyone (rate-limited per source)',
});

const ClientMetadataDocuments = z
  .string()
  .max(4000, 'must be at most 4000 characters')
  .superRefine((value, ctx) => {
    const parsed = parseClientMetadataDocuments(value);
    if (!parsed.ok) ctx.addIssue({ code: 'custom', message: parsed.reason });
  })
  .meta({
    description:
      'Standard platforms: client ID metadata documents. off (default), on (any https client_id URL), or host patterns separated by spaces ("*.example.com app.example.org")',
  });

const Name = z.string().trim().min(1, 'must not be empty').max(200, 'must be at most 200 characters');

export const Platform = z
  .object({
    platform_guid: Uuid,
    name: z.string(),
    mfa: z
      .enum(MFA_POLICIES)
      .meta({ description: 'Second factor: off, optional (users who enrolled), required (everyone)' }),
    signing_profile: SigningProfile,
    registration: Registration,
    client_metadata_documents: z.string().meta({ description: 'off, on, or host patterns separated by spaces' }),
    rate_limits: z
      .record(z.string(), z.number().int())
      .meta({ description: 'Per-endpoint overrides, requests per minute' }),
    logo_url: z.string().nullable().meta({ description: 'The https logo URL (used when no logo is uploaded)' }),
    logo_version: z.string().nullable().meta({ description: "The uploaded logo's content hash; null: none uploaded" }),
    uploaded_logo_path: z.string().nullable().meta({
      description:
        'Where the uploaded logo is served (GET, no token), e.g. /platforms/{platform_guid}/logo?v={logo_version}',
    }),
    accent_color: z.string().nullable().meta({ description: "#rrggbb; null: Latchkey's indigo" }),
    support_email: z.string().nullable(),
    created_at: Timestamp,
  })
  .meta({ id: 'Platform' });

export const PlatformPage = pageOf(Platform, 'PlatformPage');

export const PlatformCreate = z
  .object({ name: Name, signing_profile: SigningProfile.optional() })
  .strict()
  .meta({ id: 'PlatformCreate' });

export const PlatformUpdate = z
  .object({
    name: Name.optional(),
    mfa: z.enum(MFA_POLICIES).optional(),
    signing_profile: SigningProfile.optional(),
    registration: Registration.optional(),
    client_metadata_documents: ClientMetadataDocuments.optional(),
    logo_url: LogoUrl.optional(),
    accent_color: AccentColor.optional(),
    support_email: SupportEmail.optional(),
  })
  .strict()
  .refine((b) => Object.keys(b).length > 0, 'give at least one field to change')
  .meta({ id: 'PlatformUpdate' });

export const PlatformCreated = Platform.extend({ kid: z.string().meta({ description: 'The first signing key' }) }).meta(
  { id: 'PlatformCreated' },
);

export const RateLimits = z
  .object({
    platform_guid: Uuid,
    limits: z.array(
      z.object({
        endpoint: z.enum(RATE_LIMITED_ENDPOINTS),
        default_per_minute: z.number().int(),
        override_per_minute: z.number().int().nullable(),
        effective_per_minute: z.number().int(),
      }),
    ),
  })
  .meta({ id: 'RateLimits' });

export const RateLimitParams = z.object({ platform_guid: Uuid, endpoint: z.enum(RATE_LIMITED_ENDPOINTS) });

export const RateLimitSet = z
  .object({ per_minute: z.number().int().min(1, 'must be at least 1').max(1_000_000, 'must be at most 1000000') })
  .strict()
  .meta({ id: 'RateLimitSet' });
