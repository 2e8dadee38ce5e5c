import { invalidRequest } from '../../errors';
import type { Services } from '../../services';
import type { AdminActor } from '../../domain/admin';
import {
  RESOURCE_SCOPES_MAX,
  RESOURCE_TOKEN_TTL_MAX,
  RESOURCE_TOKEN_TTL_MIN,
  RESOURCES_PER_PLATFORM_MAX,
  type ResourceScope,
} from '../../domain/resource';
import { parseInput } from '../../services/admin/parse-input';
import { PlatformParams } from '../../wire/admin/common.schemas';
import { ResourceCreate, ResourceParams, ResourceUpdate } from '../../wire/admin/resources.schemas';
import { presentResource } from '../../presenters/admin/resource.presenter';
import type { CliCommand } from '../command-table';
import { many, one, switchFlag, type Flags } from '../flags';

const platformOf = (flags: Flags) =>
  parseInput(PlatformParams, { platform_guid: one(flags, 'platform', true) }).platform_guid;

/** `--resource ID` or `--uri URI` (one of them): the resource's id, or its URI as the services look it up. */
function resourceRefOf(flags: Flags): { platformId: string; ref: string } {
  const platformId = platformOf(flags);
  const id = one(flags, 'resource');
  const uri = one(flags, 'uri');
  if ((id === undefined) === (uri === undefined)) throw invalidRequest('give --resource ID or --uri URI (one of them)');
  return {
    platformId,
    ref:
      id !== undefined ? parseInput(ResourceParams, { platform_guid: platformId, resource_id: id }).resource_id : uri!,
  };
}

/** `--scopes "a b"` → the names; absent → undefined. */
function namesOf(flags: Flags, name: string): string[] | undefined {
  const value = one(flags, name);
  return value === undefined ? undefined : value.split(/\s+/).filter(Boolean);
}

/** Repeated `--scope-description NAME=TEXT` → name → text. */
function descriptionsOf(flags: Flags): Map<string, string> {
  const out = new Map<string, string>();
  for (const pair of many(flags, 'scope-description')) {
    const eq = pair.indexOf('=');
    if (eq <= 0)
      throw invalidRequest(
        `--scope-description ${pair}: write NAME=TEXT, e.g. --scope-description docs:read="Read your documents"`,
      );
    out.set(pair.slice(0, eq).trim(), pair.slice(eq + 1).trim());
  }
  return out;
}

/** The scopes with their descriptions: each given description, else the current one (update), else none. */
function scopesWith(
  names: string[],
  descriptions: Map<string, string>,
  current: readonly ResourceScope[] = [],
): Array<{ name: string; description: string }> {
  for (const name of descriptions.keys()) {
    if (!names.includes(name))
      throw invalidRequest(`--scope-description ${name}: the resource has no scope "${name}" (name it in --scopes)`);
  }
  return names.map((name) => ({
    name,
    description: descriptions.get(name) ?? current.find((s) => s.name === name)?.description ?? '',
  }));
}

/** `--access-token-ttl S` → a number (the schema checks it is whole); `--no-access-token-ttl` → null (the platform's default). */
function ttlOf(flags: Flags, removable: boolean): number | null | undefined {
  const value = one(flags, 'access-token-ttl');
  const none = removable && switchFlag(flags, 'no-access-token-ttl');
  if (value !== undefined && none) throw invalidRequest('give --access-token-ttl or --no-access-token-ttl, not both');
  if (none) return null;
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value)) throw invalidRequest('--access-token-ttl: a whole number of seconds');
  return Number(value);
}

const withoutUndefined = <T extends object>(o: T): T =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;

const DETAILS = [
  '--uri URI: the resource indicator clients send as `resource` (RFC 8707): absolute, no fragment; unique on the platform',
  '--name N: for operators and the consent page',
  `--scopes "a b": the scopes it defines, in the order consent shows them (at most ${RESOURCE_SCOPES_MAX}; not openid, profile, email, … )`,
  '--scope-description NAME=TEXT (repeatable): what consent shows beside scope NAME, e.g. --scope-description docs:read="Read your documents"',
  '--default-scopes "a": what a request naming the resource and no scope gets; "" or absent: every scope',
  `--access-token-ttl S: its access tokens' lifetime, ${RESOURCE_TOKEN_TTL_MIN} to ${RESOURCE_TOKEN_TTL_MAX} seconds (default: the platform's)`,
  `Standard platforms only; at most ${RESOURCES_PER_PLATFORM_MAX} per platform.`,
];

async function update(s: Services, flags: Flags, actor: AdminActor) {
  const { platformId, ref } = resourceRefOf(flags);
  const current = await s.admin.resources.get(actor, platformId, ref);
  const names = namesOf(flags, 'scopes');
  const descriptions = descriptionsOf(flags);
  const scopes =
    names || descriptions.size
      ? scopesWith(names ?? current.scopes.map((x) => x.name), descriptions, current.scopes)
      : undefined;
  const body = parseInput(
    ResourceUpdate,
    withoutUndefined({
      uri: one(flags, 'new-uri'),
      name: one(flags, 'name'),
      scopes,
      default_scopes: namesOf(flags, 'default-scopes'),
      access_token_ttl_seconds: ttlOf(flags, true),
    }),
  );
  return presentResource(await s.admin.resources.update(actor, platformId, current.id, body));
}

export const resourceCommands: CliCommand[] = [
  {
    group: 'resource',
    verb: 'create',
    usage:
      '--platform G --uri URI --name N [--scopes "a b"] [--scope-description NAME=TEXT ...] [--default-scopes "a"] [--access-token-ttl S]',
    flags: ['platform', 'uri', 'name', 'scopes', 'scope-description', 'default-scopes', 'access-token-ttl'],
    summary: "Register a resource (an API, an MCP server) that the platform's clients ask tokens for with `resource`.",
    details: DETAILS,
    async run(s, flags, actor) {
      const body = parseInput(
        ResourceCreate,
        withoutUndefined({
          uri: one(flags, 'uri', true),
          name: one(flags, 'name', true),
          scopes: scopesWith(namesOf(flags, 'scopes') ?? [], descriptionsOf(flags)),
          default_scopes: namesOf(flags, 'default-scopes'),
          access_token_ttl_seconds: ttlOf(flags, false),
        }),
      );
      return presentResource(await s.admin.resources.create(actor, platformOf(flags), body));
    },
  },
  {
    group: 'resource',
    verb: 'list',
    usage: '--platform G',
    flags: ['platform'],
    summary: "A platform's resources, in the order they were added.",
    async run(s, flags, actor) {
      return { items: (await s.admin.resources.list(actor, platformOf(flags))).map(presentResource) };
    },
  },
  {
    group: 'resource',
    verb: 'show',
    usage: '--platform G (--resource ID | --uri URI)',
    flags: ['platform', 'resource', 'uri'],
    summary: 'One resource with its scopes and their descriptions.',
    async run(s, flags, actor) {
      const { platformId, ref } = resourceRefOf(flags);
      return presentResource(await s.admin.resources.get(actor, platformId, ref));
    },
  },
  {
    group: 'resource',
    verb: 'update',
    usage:
      '--platform G (--resource ID | --uri URI) [--new-uri URI] [--name N] [--scopes "a b"] [--scope-description NAME=TEXT ...] [--default-scopes "a"]' +
      ' [--access-token-ttl S | --no-access-token-ttl]',
    flags: [
      'platform',
      'resource',
      'uri',
      'new-uri',
      'name',
      'scopes',
      'scope-description',
      'default-scopes',
      'access-token-ttl',
      'no-access-token-ttl',
    ],
    summary: 'Change a resource; the resource as changed is checked like a new one.',
    details: [
      '--resource ID or --uri URI: the resource to change; --new-uri URI gives it another indicator',
      ...DETAILS.slice(1, 5),
      '    --scopes replaces the list (a scope kept keeps its description); --scope-description alone changes descriptions',
      `--access-token-ttl S: ${RESOURCE_TOKEN_TTL_MIN} to ${RESOURCE_TOKEN_TTL_MAX} seconds; --no-access-token-ttl: back to the platform's default`,
    ],
    run: update,
  },
  {
    group: 'resource',
    verb: 'delete',
    usage: '--platform G (--resource ID | --uri URI)',
    flags: ['platform', 'resource', 'uri'],
    summary: 'Remove a resource: requests naming it are refused; tokens already issued for it live until they expire.',
    async run(s, flags, actor) {
      const { platformId, ref } = resourceRefOf(flags);
      const removed = await s.admin.resources.delete(actor, platformId, ref);
      return { deleted: true, platform_guid: platformId, id: removed.id, uri: removed.uri };
    },
  },
];
