// The rows of the grants no browser takes part in: client credentials and token exchange
// (RFC 8693). Both are for standard platforms only, so Latchkey gets a second platform, with the
// standard profile, one resource and one confidential client allowed both grants; the user signs
// in once through the hosted pages to obtain the access token the exchange row exchanges.
import { form, request } from './lib/http';
import type { RowSpec } from './lib/load';
import { OidcDriver, type RowName } from './lib/oidc';

/** The resource both targets' client-credentials rows name (the peer registers the same URI). */
export const BENCH_RESOURCE = 'https://api.bench.example/';
export const BENCH_RESOURCE_SCOPE = 'orders:read';
const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ACCESS_TOKEN = 'urn:ietf:params:oauth:token-type:access_token';

type Cli = (env: NodeJS.ProcessEnv, args: string[]) => Promise<Record<string, unknown>>;

const formHeaders = (authorization: string) => ({
  'content-type': 'application/x-www-form-urlencoded',
  accept: 'application/json',
  authorization,
});

/** A static POST row, once answered 200 (a sanity check), else n/a with the answer. */
export async function postRow(base: string, path: string, authorization: string, body: string): Promise<RowSpec> {
  const headers = formHeaders(authorization);
  const r = await request(base + path, { method: 'POST', headers, body }).catch((e: Error) => ({
    status: 0,
    body: e.message,
  }));
  return r.status === 200
    ? { kind: 'static', method: 'POST', path, headers, body }
    : { kind: 'na', reason: `sanity check failed: HTTP ${r.status} ${r.body.slice(0, 200)}` };
}

/** The client-credentials body both targets are sent: the same resource and scope. */
export const clientCredentialsBody = (tenant: Record<string, string> = {}) =>
  form({ grant_type: 'client_credentials', resource: BENCH_RESOURCE, scope: BENCH_RESOURCE_SCOPE, ...tenant });

/**
 * A standard platform with the benchmark's resource and one confidential client allowed client
 * credentials and token exchange for it (the client-credentials row's tenant).
 */
export async function createMachinePlatform(
  o: { env: NodeJS.ProcessEnv; cli: Cli; redirectUri: string },
  name = 'Bench machines',
): Promise<{ platformGuid: string; clientId: string; clientSecret: string }> {
  const platform = await o.cli(o.env, ['platform', 'create', '--name', name, '--profile', 'standard']);
  const G = String(platform.platform_guid ?? '');
  if (!G) throw new Error(`platform create: no platform_guid in ${JSON.stringify(platform)}`);
  await o.cli(o.env, [
    'resource',
    'create',
    '--platform',
    G,
    '--uri',
    BENCH_RESOURCE,
    '--name',
    'Orders API',
    '--scopes',
    'orders:read orders:write',
  ]);
  const client = await o.cli(o.env, [
    'client',
    'create',
    '--platform',
    G,
    '--name',
    'Backend',
    '--type',
    'confidential',
    '--redirect-uri',
    o.redirectUri,
    '--scopes',
    'openid offline_access',
    '--grant-types',
    `authorization_code refresh_token client_credentials ${TOKEN_EXCHANGE}`,
    '--token-exchange-resources',
    BENCH_RESOURCE,
  ]);
  const clientId = String(client.client_id ?? '');
  const clientSecret = String(client.client_secret ?? '');
  if (!clientId || !clientSecret) throw new Error(`client create: no client credentials in ${JSON.stringify(client)}`);
  return { platformGuid: G, clientId, clientSecret };
}

export async function machineRows(o: {
  base: string;
  env: NodeJS.ProcessEnv;
  cli: Cli;
  user: { email: string; password: string; given: string; family: string; birthdate: string };
  redirectUri: string;
}): Promise<Partial<Record<RowName, RowSpec>>> {
  const { platformGuid: G, clientId, clientSecret } = await createMachinePlatform(o);
  const u = o.user;
  await o.cli(o.env, [
    'user',
    'create',
    '--platform',
    G,
    '--email',
    u.email,
    '--password',
    u.password,
    '--given-name',
    u.given,
    '--family-name',
    u.family,
    '--birthdate',
    u.birthdate,
  ]);

  const tenant = { platform_guid: G };
  const driver = new OidcDriver({
    base: o.base,
    paths: {
      discovery: '/.well-known/openid-configuration',
      jwks: '/oauth/jwks',
      authorize: '/oauth/authorize',
      token: '/oauth/token',
      userinfo: '/oauth/userinfo',
      introspect: '/oauth/introspect',
    },
    tenant,
    clientId,
    clientSecret,
    redirectUri: o.redirectUri,
    scope: `openid ${BENCH_RESOURCE_SCOPE}`,
    creds: { email: u.email, password: u.password },
    freshAuthorizeParams: { action: 'login', resource: BENCH_RESOURCE },
  });
  const rows: Partial<Record<RowName, RowSpec>> = {
    client_credentials: await postRow(o.base, '/oauth/token', driver.basic, clientCredentialsBody(tenant)),
  };
  let subject: string;
  try {
    subject = (await driver.fullSignIn()).access_token;
  } catch (err) {
    rows.token_exchange = { kind: 'na', reason: `could not obtain a subject token: ${(err as Error).message}` };
    return rows;
  }
  rows.token_exchange = await postRow(
    o.base,
    '/oauth/token',
    driver.basic,
    form({
      grant_type: TOKEN_EXCHANGE,
      subject_token: subject,
      subject_token_type: ACCESS_TOKEN,
      resource: BENCH_RESOURCE,
      scope: BENCH_RESOURCE_SCOPE,
      ...tenant,
    }),
  );
  return rows;
}
