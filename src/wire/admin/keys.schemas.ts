import { z } from 'zod';
import { SIGNING_ALGS } from '../../domain/signing-key';
import { pageOf, PlatformParams, Timestamp, Uuid } from './common.schemas';

const KEY_STATUSES = ['next', 'active', 'retiring', 'retired'] as const;

export const SigningKey = z
  .object({
    kid: z.string(),
    alg: z.enum(SIGNING_ALGS).meta({
      description: 'HS512 (every platform); RS256, ES256, EdDSA (standard platforms, public keys in the JWKS)',
    }),
    status: z.enum(KEY_STATUSES).meta({
      description:
        'next: published in the JWKS, signs from activates_at (an RS256/ES256/EdDSA rotation); active: signs new tokens; retiring: rotated out, still verifies (and is listed in the JWKS) until the tokens it signed expire; retired: verifies nothing',
    }),
    created_at: Timestamp,
    activates_at: Timestamp.nullable().optional().meta({
      description:
        'RS256, ES256, EdDSA keys: when it starts (next) or started signing, for a key rotated in with a publication delay; null for one that signed from its creation. Left out for HS512 keys (they sign from creation)',
    }),
    rotated_at: Timestamp.nullable().meta({
      description: 'When a rotation replaced it (it stopped signing); null while active',
    }),
    retired_at: Timestamp.nullable().meta({
      description: 'When it stops (retiring) or stopped (retired) verifying; null while active',
    }),
  })
  .meta({ id: 'SigningKey', description: 'A signing key: never its key material' });

export const SigningKeyPage = pageOf(SigningKey, 'SigningKeyPage');

export const KeyParams = PlatformParams.extend({ kid: Uuid.meta({ description: 'The key id (kid)' }) });

export const KeyRotated = z
  .object({
    platform_guid: Uuid,
    kid: z.string().meta({ description: 'The new key: active (HS512, or immediately), else next until activates_at' }),
    previous_kid: z
      .string()
      .nullable()
      .meta({ description: "The signing key it replaces: retiring from the new key's activation" }),
    alg: z
      .enum(SIGNING_ALGS)
      .optional()
      .meta({ description: "The rotated key's algorithm; left out for HS512 (as before signing profiles)" }),
    activates_at: Timestamp.optional().meta({
      description:
        'RS256, ES256, EdDSA: when the new key starts signing (now + SIGNING_KEY_PUBLICATION_SECONDS, or now with immediately); left out for HS512',
    }),
  })
  .meta({ id: 'KeyRotated' });

export const KeyRotate = z
  .object({
    alg: z.enum(SIGNING_ALGS).optional().meta({
      description: 'The algorithm whose key rotates; HS512 unless given. RS256, ES256, EdDSA: standard platforms only',
    }),
    immediately: z.boolean().optional().meta({
      description:
        'RS256, ES256, EdDSA: the new key signs at once instead of after SIGNING_KEY_PUBLICATION_SECONDS (a compromised key; relying parties holding a cached JWKS fail until they fetch it again). HS512 keys always rotate at once',
    }),
  })
  .strict()
  .meta({ id: 'KeyRotate' });
