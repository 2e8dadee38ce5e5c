import { z } from 'zod';
import { SIGNING_ALGS } from '../../../domain/signing-key';
import { pageOf, PlatformParams, Timestamp, Uuid } from './common.schemas';

export const KEY_STATUSES = ['active', 'retiring', 'retired'] as const;

export const SigningKey = z
  .object({
    kid: z.string(),
    alg: z.enum(SIGNING_ALGS).meta({ description: 'HS512 (every platform); RS256, ES256, EdDSA (standard platforms, public keys in the JWKS)' }),
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
    alg: z.enum(SIGNING_ALGS).optional().meta({ description: 'The rotated key\'s algorithm; left out for HS512 (as before signing profiles)' }),
  })
  .meta({ id: 'KeyRotated' });

export const KeyRotate = z
  .object({
    alg: z.enum(SIGNING_ALGS).optional().meta({ description: 'The algorithm whose key rotates; HS512 unless given. RS256, ES256, EdDSA: standard platforms only' }),
  })
  .strict()
  .meta({ id: 'KeyRotate' });
