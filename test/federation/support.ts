import { buildClient, buildUser, TEST_PASSWORD } from '../factories';
import { standardOp, pathOf, type ClockedProvider, type StandardOp } from '../support/standard-op';
import type { Browser } from '../support/browser';
import { authorizeQuery } from '../support/account-flows';
import { totpAt } from '../support/totp';

/**
 * Upstream sign-in flows against another Latchkey platform as the upstream (a `standard` platform
 * of the same provider on a real port): the downstream platform has it as an OpenID Connect
 * provider "Acme ID" (slug acme-id). Two cookie jars: the downstream browser and the upstream's.
 */

export const APP_REDIRECT = 'https://app.example/cb';
export const SLUG = 'acme-id';
export const PROVIDER_NAME = 'Acme ID';

export const callbackOf = (p: ClockedProvider, platformId: string) =>
  `${p.base}/platforms/${platformId}/upstream/callback`;

export interface Federation {
  op: StandardOp;
  down: { id: string };
  app: Awaited<ReturnType<typeof buildClient>>;
  providerId: string;
}

export async function federation(
  p: ClockedProvider,
  opts: { trustEmail?: boolean; trustMfa?: boolean; storeTokens?: boolean } = {},
): Promise<Federation> {
  const s = p.t.services;
  const op = await standardOp(p);
  const { platform } = await s.platforms.createPlatform(`Downstream ${Math.random().toString(36).slice(2, 8)}`);
  const upClient = await buildClient(s, op.platformId, { redirectUris: [callbackOf(p, platform.id)] });
  const provider = await s.federation.providers.create(platform.id, {
    kind: 'oidc',
    displayName: PROVIDER_NAME,
    issuer: op.issuer,
    clientId: upClient.id,
    clientSecret: upClient.secret,
    scopes: ['openid', 'email', 'profile'],
    trustEmail: opts.trustEmail ?? false,
    trustMfa: opts.trustMfa ?? false,
    storeTokens: opts.storeTokens ?? false,
  });
  const app = await buildClient(s, platform.id, { redirectUris: [APP_REDIRECT] });
  return { op, down: { id: platform.id }, app, providerId: provider.id };
}

/** A person at the upstream. */
export async function upstreamUser(
  p: ClockedProvider,
  f: Federation,
  input: { email?: string; givenName?: string; familyName?: string; emailVerified?: boolean } = {},
) {
  const user = await buildUser(p.t.services, f.op.platformId, {
    givenName: input.givenName ?? 'Grace',
    familyName: input.familyName ?? 'Hopper',
    ...(input.email ? { email: input.email } : {}),
  });
  if (input.emailVerified) await p.t.database.db('users').where({ id: user.id }).update({ email_verified: true });
  return user;
}

/** The downstream authorization's first page. */
export async function startAuthorization(b: Browser, f: Federation, extra: Record<string, string> = {}) {
  return b.get(`/oauth/authorize?${authorizeQuery(f.down, f.app, { scope: 'openid profile email', ...extra })}`);
}

/**
 * The upstream's hosted pages as its user goes through them (sign in, the authenticator's code when
 * asked, allow); answers where the upstream sends the browser back.
 */
export async function upstreamLeg(
  p: ClockedProvider,
  up: Browser,
  authorizationUrl: string,
  user: { id: string; email: string },
  opts: { totpSecret?: string; deny?: boolean } = {},
): Promise<string> {
  let step = await up.get(pathOf(authorizationUrl));
  for (let i = 0; i < 6 && !step.location; i++) {
    const title = up.pageTitle() ?? '';
    if (title === 'Choose an account') step = await up.submit('/chooser', { account: user.id });
    else if (title === 'Sign in') step = await up.submit('/signin', { email: user.email, password: TEST_PASSWORD });
    else if (title === 'Two-step verification')
      step = await up.submit('/second-factor', { method: 'totp', code: totpAt(opts.totpSecret!, p.now()) });
    else if (title.includes('wants to access'))
      step = await up.submit('/consent', { decision: opts.deny ? 'deny' : 'allow' });
    else throw new Error(`unexpected upstream page "${title}":\n${up.html.slice(0, 2000)}`);
  }
  if (!step.location) throw new Error('the upstream did not redirect back');
  return step.location;
}

/** "Continue with Acme ID" on the current downstream page; answers the upstream authorization URL. */
export async function continueWith(down: Browser, suffix = `/upstream/${SLUG}`): Promise<URL> {
  const started = await down.submit(suffix, {});
  if (!started.location)
    throw new Error(`no redirect to the upstream: ${started.res.status}\n${down.html.slice(0, 2000)}`);
  return new URL(started.location);
}

/** The target of a page that moves on by a 0-second refresh (views/continue.ejs), as a browser follows it. */
export const refreshOf = (html: string) =>
  /<meta http-equiv="refresh" content="0;url=([^"]+)">/.exec(html)?.[1].replace(/&amp;/g, '&');

/**
 * Continue with Acme ID → the upstream's pages → back at the downstream callback, followed to its
 * page or to the app: `location` is where the app gets the answer, by a redirect or (an app on
 * another origin) by the page that moves on to it.
 */
export async function throughUpstream(
  p: ClockedProvider,
  down: Browser,
  up: Browser,
  user: { id: string; email: string },
  opts: { totpSecret?: string; deny?: boolean; suffix?: string } = {},
) {
  const authorizationUrl = await continueWith(down, opts.suffix);
  const callback = await upstreamLeg(p, up, authorizationUrl.toString(), user, opts);
  const back = await down.get(pathOf(callback));
  const onward = back.res.status === 200 ? refreshOf(back.res.text) : undefined;
  return onward ? { ...back, location: onward } : back;
}

/** The input value of a field on the page (first match). */
export const valueOf = (html: string, name: string) =>
  new RegExp(`name="${name}"[^>]*value="([^"]*)"`).exec(html)?.[1] ??
  new RegExp(`value="([^"]*)"[^>]*name="${name}"`).exec(html)?.[1];

export const identitiesOf = (p: ClockedProvider, platformId: string) =>
  p.t.database.db('user_identities').where({ platform_id: platformId });

export const auditKinds = async (p: ClockedProvider, platformId: string) =>
  (await p.t.database.db('audit_events').where({ platform_id: platformId }).orderBy('id')).map(
    (e: { kind: string; details: unknown }) => ({
      kind: e.kind,
      details: typeof e.details === 'string' ? JSON.parse(e.details) : e.details,
    }),
  );
