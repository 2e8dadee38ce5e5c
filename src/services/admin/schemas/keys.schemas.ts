import { z } from 'zod';
import { pageOf, PlatformParams, Timestamp, Uuid } from './common.schemas';

export const KEY_STATUSES = ['active', 'retiring', 'retired'] as const;

export const SigningKey = z
  .object({
    kid: z.string(),
    alg: z.literal('HS512'),
    status: z.enum(KEY_STATUSES).meta({
      description:
        'active: signs new tokens; retiring: rotated out, still verifies (and is listed in the JWKS) until the tokens it signed expire; retired: verifies nothing',
    }),
    created_at: Timestamp,
    rotated_at: Timestamp.nullable().meta({ description: 'When a rotation replaced it (it stopped signing); null while active' }),
    retired_at: Timestamp.nullable().meta({ description: 'When it stops (retiring) or stopped (retired) verifying; null while active' }),
  })
  .meta({ id: 'SigningKey', description: 'A signing key: never its key material' });

export const SigningKeyPage = pageOf(SigningKey, 'SigningKeyPage');

export const KeyParams = PlatformParams.extend({ kid: Uuid.meta({ description: 'The key id (kid)' }) });

export const KeyRotated = z
  .object({
    platform_guid: Uuid,
    kid: z.string().meta({ description: 'The new active key' }),
    previous_kid: z.string().nullable().meta({ description: 'The key it replaced, now retiring' }),
  })
  .meta({ id: 'KeyRotated' });
