import { z } from 'zod';
import {
  RESOURCE_NAME_MAX,
  RESOURCE_SCOPE_DESCRIPTION_MAX,
  RESOURCE_SCOPES_MAX,
  RESOURCE_TOKEN_TTL_MAX,
  RESOURCE_TOKEN_TTL_MIN,
  RESOURCES_PER_PLATFORM_MAX,
} from '../../domain/resource';
import { PlatformParams, Timestamp, Uuid } from './common.schemas';

/*
 * RFC 8707 resources (APIs, MCP servers) of a standard platform as operators see them. The zod
 * schemas check shapes only; the content rules and their messages (the URI, scope names, default
 * scopes, the lifetime, the limits) are the resources service's (src/services/resources.service.ts),
 * so every door refuses a field with the same words.
 */

const Text = (max: number) => z.string().max(max, `must be at most ${max} characters`);

/** An unknown field is named, not just "unrecognized". */
const unknownFields = {
  error: (issue: { code?: string; keys?: string[] }) =>
    issue.code === 'unrecognized_keys'
      ? `unknown ${issue.keys!.length > 1 ? 'fields' : 'field'} ${issue.keys!.map((k) => `"${k}"`).join(', ')}`
      : undefined,
};

const ScopeInput = z
  .object(
    {
      name: Text(128).meta({
        description:
          'The scope token clients ask for: 1–128 characters RFC 6749 §3.3 allows (no spaces, quotes or backslashes); not an OpenID Connect scope',
        example: 'docs:read',
      }),
      description: Text(RESOURCE_SCOPE_DESCRIPTION_MAX).optional().meta({
        description: 'Shown on the consent page beside the scope (default: none)',
        example: 'Read your documents',
      }),
    },
    unknownFields,
  )
  .strict();

const fields = {
  uri: Text(2000).meta({
    description:
      'The resource indicator clients send as `resource` (RFC 8707): an absolute URI without a fragment, unique on the platform (409 if taken); access tokens for it carry it as aud',
    example: 'https://api.example.com/',
  }),
  name: Text(RESOURCE_NAME_MAX).meta({ description: 'For operators and the consent page', example: 'Documents API' }),
  scopes: z
    .array(ScopeInput)
    .max(RESOURCE_SCOPES_MAX, `at most ${RESOURCE_SCOPES_MAX} scopes`)
    .meta({
      description: `The scopes the resource defines, in the order consent shows them; at most ${RESOURCE_SCOPES_MAX}, names unique`,
    }),
  default_scopes: z
    .array(Text(128))
    .max(RESOURCE_SCOPES_MAX, `at most ${RESOURCE_SCOPES_MAX} scopes`)
    .meta({
      description:
        'What a request naming this resource and no scope gets: names among its scopes; empty: every scope it defines',
      example: ['docs:read'],
    }),
  access_token_ttl_seconds: z
    .number({ error: 'must be a number of seconds, or null' })
    .int('must be a whole number of seconds')
    .nullable()
    .meta({
      description: `Its access tokens' lifetime, ${RESOURCE_TOKEN_TTL_MIN} to ${RESOURCE_TOKEN_TTL_MAX} seconds; null: the platform's default`,
    }),
};

export const ResourceCreate = z
  .object(
    {
      uri: fields.uri,
      name: fields.name,
      scopes: fields.scopes
        .optional()
        .meta({ description: 'The scopes the resource defines, in the order consent shows them (default: none)' }),
      default_scopes: fields.default_scopes.optional(),
      access_token_ttl_seconds: fields.access_token_ttl_seconds.optional(),
    },
    unknownFields,
  )
  .strict()
  .meta({ id: 'ResourceCreate' });

export const ResourceUpdate = z
  .object(
    {
      uri: fields.uri.optional(),
      name: fields.name.optional(),
      scopes: fields.scopes
        .optional()
        .meta({ description: 'Replaces the list (the default scopes must still be among them)' }),
      default_scopes: fields.default_scopes.optional().meta({ description: 'Replaces the list; [] means every scope' }),
      access_token_ttl_seconds: fields.access_token_ttl_seconds
        .optional()
        .meta({ description: "null: back to the platform's default" }),
    },
    unknownFields,
  )
  .strict()
  .refine((b) => Object.keys(b).length > 0, 'give at least one field to change')
  .meta({
    id: 'ResourceUpdate',
    description: 'Any field; the resource as changed is checked by the rules of creation',
  });

export const ResourceScope = z
  .object({
    name: z.string(),
    description: z.string().meta({ description: 'Shown on the consent page; may be empty' }),
  })
  .meta({ id: 'ResourceScope' });

export const Resource = z
  .object({
    id: Uuid,
    platform_guid: Uuid,
    uri: z.string().meta({ description: 'The resource indicator (RFC 8707)' }),
    name: z.string(),
    scopes: z.array(ResourceScope),
    default_scopes: z.array(z.string()).meta({ description: 'Empty: every scope the resource defines' }),
    access_token_ttl_seconds: z.number().int().nullable().meta({ description: "null: the platform's default" }),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({
    id: 'Resource',
    description:
      'A protected resource (an API, an MCP server) of a standard platform, named by its RFC 8707 resource indicator',
  });

export const Resources = z.object({ items: z.array(Resource) }).meta({
  id: 'Resources',
  description: `In the order they were added; a platform has at most ${RESOURCES_PER_PLATFORM_MAX}`,
});

export const ResourceParams = PlatformParams.extend({ resource_id: Uuid.meta({ description: "The resource's id" }) });
