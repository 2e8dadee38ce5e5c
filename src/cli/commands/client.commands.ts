import { invalidRequest } from '../../errors';
import { parseInput } from '../../services/admin/parse-input';
import { PageQuery } from '../../wire/admin/common.schemas';
import { ClientCreate, ClientParams, ClientSecretRotate, ClientUpdate } from '../../wire/admin/clients.schemas';
import { presentClient } from '../../presenters/admin/client.presenter';
import type { CliCommand } from '../command-table';
import { type Flags, many, one, pageFlags, switchFlag } from '../flags';

const platformOf = (flags: Flags) =>
  parseInput(ClientParams.pick({ platform_guid: true }), { platform_guid: one(flags, 'platform', true) }).platform_guid;
const clientOf = (flags: Flags) =>
  parseInput(ClientParams, { platform_guid: one(flags, 'platform', true), client_id: one(flags, 'client', true) });

/** A repeatable URI flag: absent → unchanged; given → the new list. */
const urisIfGiven = (flags: Flags, name: string) => (flags.has(name) ? many(flags, name) : undefined);

/** `--NAME` / `--no-NAME` → true / false; neither → undefined; both → an error. */
function onOff(flags: Flags, name: string): boolean | undefined {
  const on = switchFlag(flags, name);
  const off = switchFlag(flags, `no-${name}`);
  if (on && off) throw invalidRequest(`give --${name} or --no-${name}, not both`);
  return on ? true : off ? false : undefined;
}

/** `--id-token-alg A`: `default` clears it (null: RS256); absent → undefined. */
function idTokenAlg(flags: Flags): string | null | undefined {
  const value = one(flags, 'id-token-alg');
  return value === 'default' ? null : value;
}

/** `--NAME-uri URI` / `--no-NAME-uri` → the URI / null (cleared); neither → undefined; both → an error. */
function uriOrNone(flags: Flags, name: string): string | null | undefined {
  const value = one(flags, name);
  const none = switchFlag(flags, `no-${name}`);
  if (value !== undefined && none) throw invalidRequest(`give --${name} or --no-${name}, not both`);
  return none ? null : value;
}

/** RFC 7591 metadata flags, e.g. `--logo-uri` → logo_uri; "" clears one on update. */
const METADATA_FLAGS = ['logo-uri', 'client-uri', 'policy-uri', 'tos-uri'] as const;
const metadataOf = (flags: Flags) => ({
  logo_uri: one(flags, 'logo-uri'),
  client_uri: one(flags, 'client-uri'),
  policy_uri: one(flags, 'policy-uri'),
  tos_uri: one(flags, 'tos-uri'),
});
const METADATA_USAGE = ' [--logo-uri URL] [--client-uri URL] [--policy-uri URL] [--tos-uri URL]';
const METADATA_DETAILS =
  '--logo-uri, --client-uri, --policy-uri, --tos-uri: RFC 7591 metadata shown on consent (logo, home page, privacy policy, terms); https (http only on a loopback host), at most 2048 characters';

/** Machine-client flags: the grants, the keys (which make it private_key_jwt) and the token-exchange resources. */
const GRANT_FLAGS = ['grant-types', 'jwks', 'no-jwks', 'jwks-uri', 'no-jwks-uri', 'token-exchange-resources'] as const;
const GRANT_USAGE =
  ' [--grant-types "authorization_code refresh_token client_credentials urn:ietf:params:oauth:grant-type:device_code urn:ietf:params:oauth:grant-type:token-exchange"] [--jwks JSON | --jwks-uri URL] [--token-exchange-resources "URI ..."]';
const GRANT_DETAILS = [
  '--grant-types "…": the grants the client may use, space-separated (default: authorization_code refresh_token); standard platforms only beyond those; client_credentials and token exchange: confidential only',
  '--jwks JSON / --jwks-uri URL: its public keys (a JWK Set, or where it is published): it then authenticates with private_key_jwt and has no secret; --no-jwks / --no-jwks-uri removes them (a new secret is issued)',
  '--token-exchange-resources "URI …": the registered resources it may exchange access tokens for (RFC 8693); "" empties the list',
];

/** `--jwks JSON` parsed; `--no-jwks` → null; neither → undefined. */
function jwksOf(flags: Flags): unknown {
  const value = one(flags, 'jwks');
  const none = switchFlag(flags, 'no-jwks');
  if (value !== undefined && none) throw invalidRequest('give --jwks or --no-jwks, not both');
  if (none) return null;
  if (value === undefined) return undefined;
  try {
    return JSON.parse(value);
  } catch {
    throw invalidRequest('--jwks: not JSON (give a JWK Set: {"keys": [...]})');
  }
}

/** A space-separated list flag: absent → undefined; "" → []. */
const listOf = (flags: Flags, name: string) => one(flags, name)?.split(/\s+/).filter(Boolean);

const grantsOf = (flags: Flags) => ({
  grant_types: listOf(flags, 'grant-types'),
  jwks: jwksOf(flags),
  jwks_uri: uriOrNone(flags, 'jwks-uri'),
  token_exchange_resources: listOf(flags, 'token-exchange-resources'),
});

const SIGNING_AND_LOGOUT_DETAILS = [
  '--id-token-alg RS256|ES256|EdDSA|HS512: standard platforms only: the ID-token algorithm (default RS256; HS512, keyed with the secret: confidential only)',
  '--backchannel-logout-uri URI: where logout tokens are POSTed (OIDC Back-Channel Logout); --backchannel-logout-session-required: they must carry sid',
  '--frontchannel-logout-uri URI: loaded in an iframe at sign-out (OIDC Front-Channel Logout); --frontchannel-logout-session-required: with iss and sid',
  'Logout URIs: absolute http(s), no fragment; https in production except on a loopback host',
];

export const clientCommands: CliCommand[] = [
  {
    group: 'client',
    verb: 'create',
    usage:
      '--platform G --name NAME --type confidential|public --redirect-uri URI [--redirect-uri URI ...] --scopes "openid profile email phone address offline_access" [--post-logout-redirect-uri URI ...] [--resource-server]' +
      ' [--id-token-alg RS256|ES256|EdDSA|HS512] [--backchannel-logout-uri URI [--backchannel-logout-session-required]] [--frontchannel-logout-uri URI [--frontchannel-logout-session-required]]' +
      METADATA_USAGE +
      GRANT_USAGE,
    flags: [
      'platform',
      'name',
      'type',
      'redirect-uri',
      'scopes',
      'post-logout-redirect-uri',
      'resource-server',
      'id-token-alg',
      'backchannel-logout-uri',
      'backchannel-logout-session-required',
      'frontchannel-logout-uri',
      'frontchannel-logout-session-required',
      ...METADATA_FLAGS,
      ...GRANT_FLAGS.filter((f) => !f.startsWith('no-')),
    ],
    summary: 'Register a client; a confidential one gets its secret, shown once (none when it registers keys).',
    details: [
      '--redirect-uri and --scopes (with openid): required with the authorization_code grant (the default)',
      "--resource-server: confidential only: may introspect other clients' tokens",
      ...SIGNING_AND_LOGOUT_DETAILS,
      METADATA_DETAILS,
      ...GRANT_DETAILS,
    ],
    async run(s, flags, actor) {
      const platformId = platformOf(flags);
      const body = parseInput(ClientCreate, {
        name: one(flags, 'name', true),
        type: one(flags, 'type', true),
        redirect_uris: many(flags, 'redirect-uri'),
        post_logout_redirect_uris: many(flags, 'post-logout-redirect-uri'),
        scopes: one(flags, 'scopes'),
        is_resource_server: switchFlag(flags, 'resource-server'),
        ...withoutUndefined({
          ...grantsOf(flags),
          id_token_signed_response_alg: idTokenAlg(flags),
          backchannel_logout_uri: one(flags, 'backchannel-logout-uri'),
          frontchannel_logout_uri: one(flags, 'frontchannel-logout-uri'),
          ...metadataOf(flags),
        }),
        backchannel_logout_session_required: switchFlag(flags, 'backchannel-logout-session-required'),
        frontchannel_logout_session_required: switchFlag(flags, 'frontchannel-logout-session-required'),
      });
      const { client, secret } = await s.admin.clients.create(actor, platformId, body);
      return { ...presentClient(client), client_secret: secret };
    },
  },
  {
    group: 'client',
    verb: 'list',
    usage: '--platform G [--limit N] [--cursor C]',
    flags: ['platform', 'limit', 'cursor'],
    summary: "List a platform's clients, oldest first (a page; next_cursor continues). Secrets are never shown.",
    async run(s, flags, actor) {
      const page = await s.admin.clients.list(actor, platformOf(flags), parseInput(PageQuery, pageFlags(flags)));
      return { items: page.items.map(presentClient), next_cursor: page.nextCursor };
    },
  },
  {
    group: 'client',
    verb: 'show',
    usage: '--platform G --client ID',
    flags: ['platform', 'client'],
    summary: 'One client: type, URIs, scopes, resource-server flag, secret overlap (never the secret).',
    async run(s, flags, actor) {
      const { platform_guid, client_id } = clientOf(flags);
      return presentClient(await s.admin.clients.get(actor, platform_guid, client_id));
    },
  },
  {
    group: 'client',
    verb: 'update',
    usage:
      '--platform G --client ID [--name NAME] [--type confidential|public] [--redirect-uri URI ...] [--post-logout-redirect-uri URI ... | --no-post-logout-redirect-uris] [--scopes "openid ..."] [--resource-server | --no-resource-server]' +
      ' [--id-token-alg RS256|ES256|EdDSA|HS512|default] [--backchannel-logout-uri URI | --no-backchannel-logout-uri] [--backchannel-logout-session-required | --no-backchannel-logout-session-required]' +
      ' [--frontchannel-logout-uri URI | --no-frontchannel-logout-uri] [--frontchannel-logout-session-required | --no-frontchannel-logout-session-required]' +
      ' [--logo-uri URL|""] [--client-uri URL|""] [--policy-uri URL|""] [--tos-uri URL|""]' +
      ' [--grant-types "…"] [--jwks JSON | --no-jwks] [--jwks-uri URL | --no-jwks-uri] [--token-exchange-resources "URI …"|""]',
    flags: [
      'platform',
      'client',
      'name',
      'type',
      'redirect-uri',
      'post-logout-redirect-uri',
      'no-post-logout-redirect-uris',
      'scopes',
      'resource-server',
      'no-resource-server',
      'id-token-alg',
      'backchannel-logout-uri',
      'no-backchannel-logout-uri',
      'backchannel-logout-session-required',
      'no-backchannel-logout-session-required',
      'frontchannel-logout-uri',
      'no-frontchannel-logout-uri',
      'frontchannel-logout-session-required',
      'no-frontchannel-logout-session-required',
      ...METADATA_FLAGS,
      ...GRANT_FLAGS,
    ],
    summary: 'Change a client; the rules of create apply to the client as changed.',
    details: [
      '--redirect-uri / --post-logout-redirect-uri: the given list replaces the registered one',
      '--no-post-logout-redirect-uris: removes every post-logout redirect URI',
      '--type confidential (from public): a secret is issued, shown once; --type public drops the secret',
      "--resource-server / --no-resource-server: may (not) introspect other clients' tokens; confidential only",
      ...SIGNING_AND_LOGOUT_DETAILS,
      '--id-token-alg default: back to the default (RS256); --no-backchannel-logout-uri / --no-frontchannel-logout-uri: removes it; --no-…-session-required: turns it off',
      METADATA_DETAILS,
      '--logo-uri "" (and the others): removes it',
      ...GRANT_DETAILS,
    ],
    async run(s, flags, actor) {
      const { platform_guid, client_id } = clientOf(flags);
      const clearLogout = switchFlag(flags, 'no-post-logout-redirect-uris');
      const logoutUris = urisIfGiven(flags, 'post-logout-redirect-uri');
      if (clearLogout && logoutUris)
        throw invalidRequest('give --post-logout-redirect-uri or --no-post-logout-redirect-uris, not both');
      const body = parseInput(
        ClientUpdate,
        withoutUndefined({
          name: one(flags, 'name'),
          type: one(flags, 'type'),
          redirect_uris: urisIfGiven(flags, 'redirect-uri'),
          post_logout_redirect_uris: clearLogout ? [] : logoutUris,
          scopes: one(flags, 'scopes'),
          is_resource_server: onOff(flags, 'resource-server'),
          id_token_signed_response_alg: idTokenAlg(flags),
          backchannel_logout_uri: uriOrNone(flags, 'backchannel-logout-uri'),
          backchannel_logout_session_required: onOff(flags, 'backchannel-logout-session-required'),
          frontchannel_logout_uri: uriOrNone(flags, 'frontchannel-logout-uri'),
          frontchannel_logout_session_required: onOff(flags, 'frontchannel-logout-session-required'),
          ...metadataOf(flags),
          ...grantsOf(flags),
        }),
      );
      const { client, secret } = await s.admin.clients.update(actor, platform_guid, client_id, body);
      return secret ? { ...presentClient(client), client_secret: secret } : presentClient(client);
    },
  },
  {
    group: 'client',
    verb: 'rotate-secret',
    usage: '--platform G --client ID [--overlap-seconds N]',
    flags: ['platform', 'client', 'overlap-seconds'],
    summary: 'A new secret, shown once; the previous one keeps working for the overlap.',
    details: [
      '--overlap-seconds N: how long the previous secret still works (default CLIENT_SECRET_OVERLAP_SECONDS, 86400; 0: it stops now; at most 2592000)',
    ],
    async run(s, flags, actor) {
      const { platform_guid, client_id } = clientOf(flags);
      const raw = one(flags, 'overlap-seconds');
      const body = parseInput(
        ClientSecretRotate,
        raw === undefined ? {} : { overlap_seconds: raw.trim() === '' ? NaN : Number(raw) },
      );
      const { client, secret } = await s.admin.clients.rotateSecret(actor, platform_guid, client_id, body);
      return { ...presentClient(client), client_secret: secret };
    },
  },
  {
    group: 'client',
    verb: 'delete',
    usage: '--platform G --client ID',
    flags: ['platform', 'client'],
    summary: 'Delete a client with its codes, tokens, refresh tokens and consents.',
    async run(s, flags, actor) {
      const { platform_guid, client_id } = clientOf(flags);
      await s.admin.clients.delete(actor, platform_guid, client_id);
      return { deleted: true, platform_guid, client_id };
    },
  },
];

/** Only the flags given: an update with none is refused by the schema ("give at least one field"). */
function withoutUndefined<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}
