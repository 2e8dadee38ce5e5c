import { readFile } from 'node:fs/promises';
import { invalidRequest } from '../../errors';
import { LOGO_CONTENT_TYPES, LOGO_MAX_BYTES } from '../../domain/branding';
import { isMfaPolicy, MFA_POLICIES } from '../../domain/mfa';
import { RATE_LIMITED_ENDPOINTS } from '../../domain/platform';
import { parseInput } from '../../services/admin/parse-input';
import { PageQuery, PlatformParams } from '../../wire/admin/common.schemas';
import { PlatformCreate, PlatformUpdate, RateLimitParams, RateLimitSet } from '../../wire/admin/platforms.schemas';
import { presentPlatform, presentRateLimits } from '../../presenters/admin/platform.presenter';
import type { CliCommand } from '../command-table';
import { one, pageFlags, switchFlag } from '../flags';
import { checkLogo } from '../../services/platform-logo';

const platformOf = (flags: Parameters<CliCommand['run']>[1]) =>
  parseInput(PlatformParams, { platform_guid: one(flags, 'platform', true) }).platform_guid;

export const platformCommands: CliCommand[] = [
  {
    group: 'platform',
    verb: 'create',
    usage: '--name NAME [--profile seed|standard]',
    flags: ['name', 'profile'],
    summary: 'Create a platform with its first signing key.',
    details: [
      "--profile seed (default): the spec's HS512 tokens; standard: also RS256, ES256 and EdDSA keys, published in the JWKS",
    ],
    async run(s, flags, actor) {
      const { platform, kid } = await s.admin.platforms.create(
        actor,
        parseInput(PlatformCreate, { name: one(flags, 'name', true), signing_profile: one(flags, 'profile') }),
      );
      return { ...presentPlatform(platform), kid };
    },
  },
  {
    group: 'platform',
    verb: 'list',
    usage: '[--limit N] [--cursor C]',
    flags: ['limit', 'cursor'],
    summary: 'List platforms, oldest first (a page; next_cursor continues).',
    async run(s, flags, actor) {
      const page = await s.admin.platforms.list(actor, parseInput(PageQuery, pageFlags(flags)));
      return { items: page.items.map(presentPlatform), next_cursor: page.nextCursor };
    },
  },
  {
    group: 'platform',
    verb: 'show',
    usage: '--platform G',
    flags: ['platform'],
    summary: 'One platform: name, second-factor policy, signing profile, rate-limit overrides, branding.',
    run: async (s, flags, actor) => presentPlatform(await s.admin.platforms.get(actor, platformOf(flags))),
  },
  {
    group: 'platform',
    verb: 'update',
    usage:
      '--platform G [--name NAME] [--mfa off|optional|required] [--profile seed|standard] [--logo-url URL|""] [--logo-file PATH | --remove-logo] [--accent-color "#rrggbb"|""] [--support-email EMAIL|""] [--registration off|token|open] [--client-metadata-documents off|on|"host1 *.host2"]',
    flags: [
      'platform',
      'name',
      'mfa',
      'profile',
      'logo-url',
      'logo-file',
      'remove-logo',
      'accent-color',
      'support-email',
      'registration',
      'client-metadata-documents',
    ],
    summary:
      'Rename a platform, set its second-factor policy, its signing profile, its branding or who may register clients.',
    details: [
      '--mfa off: never asked; optional: asked of users who enrolled; required: every user enrols',
      "--profile standard: RS256, ES256 and EdDSA keys (created if missing), public keys in the JWKS; seed: the spec's HS512 interface",
      '--logo-url URL: an https URL the pages load the logo from when none is uploaded',
      `--logo-file PATH: uploads the logo (${LOGO_CONTENT_TYPES.join(', ')}, recognised by content; at most ${LOGO_MAX_BYTES / 1024} KiB); --remove-logo removes it`,
      '--accent-color "#rrggbb": buttons and links; at least 4.5:1 against white',
      "--support-email EMAIL: shown in the pages' footer",
      'An empty value ("") clears --logo-url, --accent-color and --support-email',
      '--registration (standard platforms): RFC 7591 registration at {issuer}/oauth/register; off (default), token (with an initial access token: registration-token create), open (anyone, rate-limited per source)',
      '--client-metadata-documents (standard platforms): client_id URLs fetched as metadata documents; off (default), on (any https URL), or host patterns "app.example.org *.example.com"',
    ],
    async run(s, flags, actor) {
      const platformId = platformOf(flags);
      const logoFile = one(flags, 'logo-file');
      const removeLogo = switchFlag(flags, 'remove-logo');
      if (logoFile !== undefined && removeLogo) throw invalidRequest('give --logo-file or --remove-logo, not both');
      const fields = withoutUndefined({
        name: one(flags, 'name'),
        mfa: one(flags, 'mfa'),
        signing_profile: one(flags, 'profile'),
        logo_url: one(flags, 'logo-url'),
        accent_color: one(flags, 'accent-color'),
        support_email: one(flags, 'support-email'),
        registration: one(flags, 'registration'),
        client_metadata_documents: one(flags, 'client-metadata-documents'),
      });
      const logo = logoFile === undefined ? undefined : await readLogo(logoFile);
      // Everything is checked before anything changes: the fields by their schema, the file (readLogo) by its content.
      const body =
        Object.keys(fields).length || (!logo && !removeLogo) ? parseInput(PlatformUpdate, fields) : undefined;
      let platform = body
        ? await s.admin.platforms.update(actor, platformId, body)
        : await s.admin.platforms.get(actor, platformId);
      if (logo) platform = await s.admin.platforms.setLogo(actor, platformId, logo);
      if (removeLogo) platform = await s.admin.platforms.removeLogo(actor, platformId);
      return presentPlatform(platform);
    },
  },
  {
    group: 'platform',
    verb: 'mfa',
    usage: '--platform G --policy off|optional|required',
    flags: ['platform', 'policy'],
    summary: 'Set the second-factor policy (the same as update --mfa).',
    async run(s, flags, actor) {
      const policy = one(flags, 'policy', true);
      if (!isMfaPolicy(policy)) throw invalidRequest(`--policy must be one of ${MFA_POLICIES.join(', ')}`);
      const platform = await s.admin.platforms.update(actor, platformOf(flags), { mfa: policy });
      return { platform_guid: platform.id, mfa: platform.mfaPolicy };
    },
  },
  {
    group: 'platform',
    verb: 'rate-limits',
    usage: '--platform G',
    flags: ['platform'],
    summary: "Every rate-limited endpoint: the spec's limit, the override and the limit in force.",
    run: async (s, flags, actor) => presentRateLimits(await s.admin.platforms.get(actor, platformOf(flags))),
  },
  {
    group: 'platform',
    verb: 'rate-limit',
    usage: '--platform G --endpoint NAME --per-minute N|default',
    flags: ['platform', 'endpoint', 'per-minute'],
    summary: 'Override one endpoint\'s limit (requests per minute), or go back to the spec\'s with "default".',
    details: [`--endpoint one of ${RATE_LIMITED_ENDPOINTS.join(', ')}`],
    async run(s, flags, actor) {
      const { platform_guid, endpoint } = parseInput(RateLimitParams, {
        platform_guid: one(flags, 'platform', true),
        endpoint: one(flags, 'endpoint', true),
      });
      const raw = one(flags, 'per-minute', true);
      const perMinute = raw === 'default' ? null : parseInput(RateLimitSet, { per_minute: Number(raw) }).per_minute;
      const platform = await s.admin.platforms.setRateLimit(actor, platform_guid, endpoint, perMinute);
      return { platform_guid, rate_limits: platform.rateLimitOverrides };
    },
  },
];

/** The logo file's bytes, checked (type by content, size) before anything changes. */
async function readLogo(path: string): Promise<Buffer> {
  const bytes = await readFile(path).catch((err: NodeJS.ErrnoException) => {
    throw invalidRequest(`--logo-file: cannot read "${path}" (${err.code ?? err.message})`);
  });
  checkLogo(bytes);
  return bytes;
}

/** Only the flags given: an update with none is refused by the schema ("give at least one field"). */
function withoutUndefined<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}
