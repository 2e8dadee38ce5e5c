import type { z } from 'zod';
import type { Platform, RateLimits } from '../../wire/admin/platforms.schemas';
import type { PlatformWithPolicy } from '../../repositories/platform.repository';
import { RATE_LIMITED_ENDPOINTS, RATE_LIMITS } from '../../domain/platform';
import { uploadedLogoPath } from '../../domain/branding';

export function presentPlatform(p: PlatformWithPolicy): z.infer<typeof Platform> {
  return {
    platform_guid: p.id,
    name: p.name,
    mfa: p.mfaPolicy as z.infer<typeof Platform>['mfa'],
    signing_profile: p.signingProfile,
    registration: p.registration,
    client_metadata_documents: p.clientMetadataDocuments,
    rate_limits: p.rateLimitOverrides,
    logo_url: p.branding.logoUrl,
    logo_version: p.branding.logoVersion,
    uploaded_logo_path: p.branding.logoVersion ? uploadedLogoPath(p.id, p.branding.logoVersion) : null,
    accent_color: p.branding.accentColor,
    support_email: p.branding.supportEmail,
    created_at: p.createdAt.toISOString(),
  };
}

/** Every limited endpoint: the spec's limit, the platform's override and the one in force. */
export function presentRateLimits(p: PlatformWithPolicy): z.infer<typeof RateLimits> {
  return {
    platform_guid: p.id,
    limits: RATE_LIMITED_ENDPOINTS.map((endpoint) => {
      const override = p.rateLimitOverrides[endpoint];
      const overridePerMinute = typeof override === 'number' && override > 0 ? override : null;
      return {
        endpoint,
        default_per_minute: RATE_LIMITS[endpoint],
        override_per_minute: overridePerMinute,
        effective_per_minute: overridePerMinute ?? RATE_LIMITS[endpoint],
      };
    }),
  };
}
