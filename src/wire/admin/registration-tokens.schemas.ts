import { z } from 'zod';
import { pageOf, PlatformParams, Timestamp, Uuid } from './common.schemas';

const STATUSES = ['active', 'exhausted', 'expired', 'revoked'] as const;

export const RegistrationToken = z
  .object({
    id: Uuid,
    platform_guid: Uuid,
    status: z
      .enum(STATUSES)
      .meta({ description: 'active: registers clients; exhausted: max_uses spent; expired; revoked' }),
    max_uses: z.number().int().nullable().meta({ description: 'How many clients it may register; null: unlimited' }),
    uses: z.number().int().meta({ description: 'How many clients it registered' }),
    expires_at: Timestamp.nullable().meta({ description: 'null: never expires' }),
    created_at: Timestamp,
    revoked_at: Timestamp.nullable(),
    created_by: z.string().nullable().meta({ description: 'Who made it, as the audit log names the actor' }),
  })
  .meta({ id: 'RegistrationToken', description: 'An initial access token (RFC 7591 §3): never the token itself' });

export const RegistrationTokenPage = pageOf(RegistrationToken, 'RegistrationTokenPage');

export const RegistrationTokenCreate = z
  .object({
    max_uses: z
      .number()
      .int()
      .min(1, 'must be at least 1')
      .max(1_000_000, 'must be at most 1000000')
      .optional()
      .meta({ description: 'How many clients it may register; unlimited if left out' }),
    expires_in: z
      .number()
      .int()
      .min(60, 'must be at least 60 seconds')
      .max(31_536_000, 'must be at most a year (31536000 seconds)')
      .optional()
      .meta({ description: 'Seconds until it expires; never if left out' }),
  })
  .strict()
  .meta({ id: 'RegistrationTokenCreate' });

export const RegistrationTokenCreated = RegistrationToken.extend({
  token: z
    .string()
    .meta({ description: 'The token, shown this once: Authorization: Bearer TOKEN on POST {issuer}/oauth/register' }),
}).meta({ id: 'RegistrationTokenCreated' });

export const RegistrationTokenParams = PlatformParams.extend({
  token_id: Uuid.meta({ description: 'The registration token id' }),
});
