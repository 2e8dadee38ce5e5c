import { invalidRequest } from '../../errors';
import type { Services } from '../../services';
import { MAPPABLE_CLAIMS, UPSTREAM_KINDS } from '../../domain/upstream';
import { parseInput } from '../../services/admin/parse-input';
import { PlatformParams } from '../../wire/admin/common.schemas';
import {
  UpstreamProviderCreate,
  UpstreamProviderParams,
  UpstreamProviderUpdate,
  UserIdentityParams,
} from '../../wire/admin/upstream-providers.schemas';
import { presentUpstreamProvider, presentUserIdentity } from '../../presenters/admin/upstream-provider.presenter';
import type { CliCommand } from '../command-table';
import { many, one, switchFlag, type Flags } from '../flags';
import { userOf } from './user.commands';

const platformOf = (flags: Flags) =>
  parseInput(PlatformParams, { platform_guid: one(flags, 'platform', true) }).platform_guid;
const providerOf = (flags: Flags) =>
  parseInput(UpstreamProviderParams, {
    platform_guid: one(flags, 'platform', true),
    provider_id: one(flags, 'provider', true),
  });

/** `--NAME` / `--no-NAME` → true / false; neither → undefined; both → an error. */
function onOff(flags: Flags, name: string, off = `no-${name}`): boolean | undefined {
  const yes = switchFlag(flags, name);
  const no = switchFlag(flags, off);
  if (yes && no) throw invalidRequest(`give --${name} or --${off}, not both`);
  return yes ? true : no ? false : undefined;
}

/** `--scopes "openid email"` → the list; absent → undefined. */
function scopesOf(flags: Flags): string[] | undefined {
  const value = one(flags, 'scopes');
  return value === undefined ? undefined : value.split(/\s+/).filter(Boolean);
}

/** Repeated `--claim LOCAL=UPSTREAM` → the claim mapping; none → undefined. */
function claimsOf(flags: Flags): Record<string, string> | undefined {
  const given = many(flags, 'claim');
  if (given.length === 0) return undefined;
  const mapping: Record<string, string> = {};
  for (const pair of given) {
    const eq = pair.indexOf('=');
    if (eq <= 0 || eq === pair.length - 1)
      throw invalidRequest(`--claim ${pair}: write LOCAL=UPSTREAM, e.g. --claim email=mail`);
    mapping[pair.slice(0, eq).trim()] = pair.slice(eq + 1).trim();
  }
  return mapping;
}

/**
 * The whole of standard input, without the line end `echo` or a here-string adds: a secret given
 * this way stays out of the shell history and the process list (unlike --client-secret S).
 */
async function readSecretFromStdin(): Promise<string> {
  if (process.stdin.isTTY) process.stderr.write('Client secret (then Enter and Ctrl-D): ');
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(Buffer.from(chunk as Buffer));
  const secret = Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
  if (!secret.trim()) throw invalidRequest('--client-secret-stdin: standard input gave no secret');
  return secret;
}

/** `--client-secret S` or `--client-secret-stdin` (not both); `--no-client-secret` (update) removes it. */
async function secretOf(flags: Flags, removable: boolean): Promise<string | null | undefined> {
  const inline = one(flags, 'client-secret');
  const fromStdin = switchFlag(flags, 'client-secret-stdin');
  const none = removable && switchFlag(flags, 'no-client-secret');
  if ([inline !== undefined, fromStdin, none].filter(Boolean).length > 1) {
    throw invalidRequest(
      `give one of --client-secret, --client-secret-stdin${removable ? ', --no-client-secret' : ''}`,
    );
  }
  if (none) return null;
  return fromStdin ? readSecretFromStdin() : inline;
}

/** The provider fields every verb that sets them shares, in the API's wire names (undefined: not given). */
function settingsOf(flags: Flags) {
  return {
    slug: one(flags, 'slug'),
    display_name: one(flags, 'name'),
    issuer: one(flags, 'issuer'),
    tenant: one(flags, 'tenant'),
    api_base_url: one(flags, 'api-base-url'),
    scopes: scopesOf(flags),
    claim_mapping: claimsOf(flags),
  };
}

const withoutUndefined = <T extends object>(o: T): T =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;

const SETTINGS = [
  'slug',
  'name',
  'issuer',
  'tenant',
  'api-base-url',
  'client-id',
  'client-secret',
  'client-secret-stdin',
  'scopes',
  'claim',
] as const;

const DETAILS = [
  `--kind ${UPSTREAM_KINDS.join('|')}: oidc is any OpenID Connect provider (give --issuer: its discovery is read from ISSUER/.well-known/openid-configuration);`,
  '    google, microsoft and github are presets that fill in the issuer, scopes, name and slug',
  '--slug S: in the sign-in URLs; lowercase letters, digits, dashes (default: the kind, or the name for oidc); unique on the platform',
  '--name NAME: the button says "Continue with NAME" (default: Google, Microsoft, GitHub)',
  '--issuer URL: https (http only to a loopback host); google/microsoft: overrides the preset; github: the web base URL (GitHub Enterprise Server)',
  '--tenant T: microsoft only: a tenant id or domain (or common, organizations, consumers)',
  '--api-base-url URL: github only: the REST API (default https://api.github.com; GitHub Enterprise Server: https://HOST/api/v3)',
  '--client-secret-stdin: reads the secret from standard input (printf %s "$SECRET" | latchkey-admin …); --client-secret S works but leaves it in the shell history and the process list',
  '    the secret is sealed under MASTER_KEY and never shown again; required for github; none: a public client at the upstream (PKCE only)',
  '--scopes "a b": asked of the upstream; must include openid except for github (default: the preset\'s; oidc: openid email profile)',
  `--claim LOCAL=UPSTREAM (repeatable): take a claim from another upstream claim name; LOCAL is one of ${MAPPABLE_CLAIMS.join(', ')}`,
  "--trust-email: a new user's email counts as verified when the upstream verified it (the google and github presets: on)",
  "--trust-mfa: the upstream's amr may satisfy the platform's MFA policy (otherwise the local second factor is asked)",
  "--store-tokens: keep the upstream's tokens, sealed, on the linked identity (otherwise nothing is kept)",
  'Register the printed callback_url as the redirect URI of the client at the upstream.',
];

const present = (s: Services) => (p: Parameters<typeof presentUpstreamProvider>[0]) =>
  presentUpstreamProvider(p, s.federation.providers.callbackUrl(p.platformId));

export const upstreamCommands: CliCommand[] = [
  {
    group: 'upstream',
    verb: 'add',
    usage:
      `--platform G --kind ${UPSTREAM_KINDS.join('|')} --client-id ID [--client-secret-stdin | --client-secret S] [--slug S] [--name NAME] [--issuer URL] [--tenant T] [--api-base-url URL]` +
      ' [--scopes "openid email profile"] [--claim LOCAL=UPSTREAM ...] [--trust-email | --no-trust-email] [--trust-mfa] [--store-tokens] [--disabled]',
    flags: ['platform', 'kind', ...SETTINGS, 'trust-email', 'no-trust-email', 'trust-mfa', 'store-tokens', 'disabled'],
    summary:
      'Add an upstream identity provider ("Continue with …"); prints the callback URL to register at the upstream.',
    details: [...DETAILS, '--disabled: added without its button (enable it with upstream update --enabled)'],
    async run(s, flags, actor) {
      const platformId = platformOf(flags);
      const body = parseInput(
        UpstreamProviderCreate,
        withoutUndefined({
          kind: one(flags, 'kind', true),
          client_id: one(flags, 'client-id', true),
          ...settingsOf(flags),
          trust_email: onOff(flags, 'trust-email'),
          trust_mfa: switchFlag(flags, 'trust-mfa') || undefined,
          store_tokens: switchFlag(flags, 'store-tokens') || undefined,
          enabled: switchFlag(flags, 'disabled') ? false : undefined,
          client_secret: await secretOf(flags, false),
        }),
      );
      const provider = present(s)(await s.admin.upstreamProviders.create(actor, platformId, body));
      return {
        ...provider,
        next_step: `Register ${provider.callback_url} as the redirect URI (callback URL) of client "${provider.client_id}" at ${provider.display_name}.`,
      };
    },
  },
  {
    group: 'upstream',
    verb: 'list',
    usage: '--platform G',
    flags: ['platform'],
    summary: "A platform's upstream providers, in the order of their buttons (never a client secret).",
    async run(s, flags, actor) {
      return { items: (await s.admin.upstreamProviders.list(actor, platformOf(flags))).map(present(s)) };
    },
  },
  {
    group: 'upstream',
    verb: 'show',
    usage: '--platform G --provider ID|SLUG',
    flags: ['platform', 'provider'],
    summary: 'One upstream provider with its callback URL (whether a secret is set, never the secret).',
    async run(s, flags, actor) {
      const { platform_guid, provider_id } = providerOf(flags);
      return present(s)(await s.admin.upstreamProviders.get(actor, platform_guid, provider_id));
    },
  },
  {
    group: 'upstream',
    verb: 'update',
    usage:
      '--platform G --provider ID|SLUG [--slug S] [--name NAME] [--issuer URL] [--tenant T] [--api-base-url URL] [--client-id ID] [--client-secret-stdin | --client-secret S | --no-client-secret]' +
      ' [--scopes "…"] [--claim LOCAL=UPSTREAM ... | --no-claims] [--trust-email | --no-trust-email] [--trust-mfa | --no-trust-mfa] [--store-tokens | --no-store-tokens] [--enabled | --disabled]',
    flags: [
      'platform',
      'provider',
      ...SETTINGS,
      'no-client-secret',
      'no-claims',
      'trust-email',
      'no-trust-email',
      'trust-mfa',
      'no-trust-mfa',
      'store-tokens',
      'no-store-tokens',
      'enabled',
      'disabled',
    ],
    summary:
      'Change an upstream provider: any setting but its kind; the provider as changed is checked like a new one.',
    details: [
      ...DETAILS.slice(2),
      '--claim replaces the whole mapping; --no-claims clears it. --no-client-secret: the upstream client becomes public (PKCE only)',
      '--disabled hides its button (linked users keep their link); --enabled shows it again',
    ],
    async run(s, flags, actor) {
      const { platform_guid, provider_id } = providerOf(flags);
      const clearClaims = switchFlag(flags, 'no-claims');
      const settings = settingsOf(flags);
      if (clearClaims && settings.claim_mapping) throw invalidRequest('give --claim or --no-claims, not both');
      const body = parseInput(
        UpstreamProviderUpdate,
        withoutUndefined({
          ...settings,
          claim_mapping: clearClaims ? {} : settings.claim_mapping,
          client_id: one(flags, 'client-id'),
          trust_email: onOff(flags, 'trust-email'),
          trust_mfa: onOff(flags, 'trust-mfa'),
          store_tokens: onOff(flags, 'store-tokens'),
          enabled: onOff(flags, 'enabled', 'disabled'),
          client_secret: await secretOf(flags, true),
        }),
      );
      return present(s)(await s.admin.upstreamProviders.update(actor, platform_guid, provider_id, body));
    },
  },
  {
    group: 'upstream',
    verb: 'remove',
    usage: '--platform G --provider ID|SLUG',
    flags: ['platform', 'provider'],
    summary: 'Remove an upstream provider and every identity linked through it (update --disabled keeps the links).',
    details: [
      'Users linked through it keep their accounts: they sign in with a password or passkey, through another provider, or after a password reset.',
    ],
    async run(s, flags, actor) {
      const { platform_guid, provider_id } = providerOf(flags);
      const { provider, identitiesUnlinked } = await s.admin.upstreamProviders.remove(
        actor,
        platform_guid,
        provider_id,
      );
      return {
        removed: true,
        platform_guid,
        id: provider.id,
        slug: provider.slug,
        identities_unlinked: identitiesUnlinked,
      };
    },
  },
  {
    group: 'upstream',
    verb: 'identities',
    usage: '--platform G (--sub S | --email E)',
    flags: ['platform', 'sub', 'email'],
    summary: 'The upstream accounts linked to a user.',
    async run(s, flags, actor) {
      const { platformId, sub } = await userOf(s, flags, actor);
      return { sub, items: (await s.admin.identities.list(actor, platformId, sub)).map(presentUserIdentity) };
    },
  },
  {
    group: 'upstream',
    verb: 'unlink',
    usage: '--platform G (--sub S | --email E) --identity ID',
    flags: ['platform', 'sub', 'email', 'identity'],
    summary:
      'Unlink an upstream account from a user (also the last way in: the user then needs a password reset mail).',
    async run(s, flags, actor) {
      const { platformId, sub } = await userOf(s, flags, actor);
      const { identity_id } = parseInput(UserIdentityParams, {
        platform_guid: platformId,
        sub,
        identity_id: one(flags, 'identity', true),
      });
      const { provider } = await s.admin.identities.unlink(actor, platformId, sub, identity_id);
      return { sub, done: 'identity_unlinked', identity_id, provider: provider.slug };
    },
  },
];
