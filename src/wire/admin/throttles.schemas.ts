import { z } from 'zod';
import { Uuid } from './common.schemas';

const THROTTLE_KINDS = ['sign_in_account', 'sign_in_source', 'sign_up_source', 'second_factor_account'] as const;

const Email = z
  .string()
  .trim()
  .min(1, 'must not be empty')
  .max(320, 'must be at most 320 characters')
  .meta({ description: 'The account (any case): its sign-in keys' });
const Source = z
  .string()
  .trim()
  .min(1, 'must not be empty')
  .max(100, 'must be at most 100 characters')
  .meta({ description: 'A source address key, as listed' });

export const Throttle = z
  .object({
    kind: z.enum(THROTTLE_KINDS).meta({
      description:
        'What is counted: failed sign-ins of one account from one source, of one source, sign-ups of one source, second-factor codes',
    }),
    platform_guid: Uuid,
    email_sha256: z.string().nullable().meta({
      description:
        'SHA-256 (base64url) of the normalised email, for keys of one account; the email itself is never shown',
    }),
    source: z.string(),
    failures: z.number().int(),
    locks: z.number().int().meta({ description: 'Consecutive locks (each doubles the next)' }),
    locked_until: z.string().meta({ format: 'date-time' }).nullable(),
    locked_seconds: z.number().int().meta({ description: 'Seconds the key stays locked; 0 when not locked' }),
  })
  .meta({ id: 'Throttle' });

export const ThrottleList = z
  .object({
    throttles: z
      .array(Throttle)
      .meta({ description: 'Every key in force (counting or locked); not paged: keys expire by themselves' }),
  })
  .meta({ id: 'ThrottleList' });

export const ThrottleQuery = z
  .object({
    email: Email.optional(),
    source: Source.optional(),
    locked: z.enum(['true', 'false']).optional().meta({ description: 'true: only keys locked now' }),
  })
  .strict();

export const ThrottleClearQuery = z
  .object({
    email: Email.optional(),
    source: Source.optional(),
    all: z.enum(['true']).optional().meta({ description: 'true: every throttle of the platform' }),
  })
  .strict()
  .refine((q) => Boolean(q.email || q.source || q.all), 'give email, source or all=true')
  .refine((q) => !(q.all && (q.email || q.source)), 'all=true clears everything: give it without email or source');

export const ThrottlesCleared = z
  .object({
    platform_guid: Uuid,
    cleared: z.number().int().meta({ description: 'How many throttle keys were removed' }),
  })
  .meta({ id: 'ThrottlesCleared' });
