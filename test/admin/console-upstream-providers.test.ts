import { buildTestApp } from '../helpers';
import { cliActor } from '../../src/domain/admin';
import { buildPlatform, buildUser } from '../factories';
import * as identities from '../../src/repositories/user-identity.repository';
import { newId } from '../../src/crypto/random';
import { buildOperator, consoleBrowser, signInConsole, type ConsoleBrowser } from './console-support';

let t: Awaited<ReturnType<typeof buildTestApp>>;
let b: ConsoleBrowser;
let email: string;
beforeAll(async () => {
  t = await buildTestApp();
  email = (await buildOperator(t.services)).email;
  b = consoleBrowser(t.app);
  await signInConsole(b, email, () => new Date());
});
afterAll(() => t.close());

type Kind =
  'upstream_provider.created' | 'upstream_provider.updated' | 'upstream_provider.deleted' | 'identity.unlinked';
const lastEvent = async (platformId: string, kind: Kind) =>
  (await t.services.audit.list({ platformId, kind }, 1)).events[0];
const byOperator = () => ({ actorType: 'operator', actorName: email });
const SECRET = 'console-upstream-secret-write-only';
const unescape = (html: string) => html.replace(/&#34;/g, '"').replace(/&#39;/g, "'").replace(/&amp;/g, '&');

describe('admin console: upstream providers', () => {
  it('is a tab of the platform; adds an OIDC provider (the secret never shown), edits it, replaces and removes the secret, removes it; all audited', async () => {
    const p = await buildPlatform(t.services);
    const list = `/admin/platforms/${p.id}/upstream-providers`;
    const callback = `http://issuer.test/platforms/${p.id}/upstream/callback`;
    const clients = await b.get(`/admin/platforms/${p.id}/clients`);
    expect(clients.text).toContain(`<a href="${list}">Upstream providers</a>`);
    const empty = await b.get(list);
    expect(empty.status).toBe(200);
    expect(empty.text).toContain('No upstream provider yet');
    expect(empty.text).toContain(`<pre class="code-block" id="callback-url">${callback}</pre>`);

    const added = await b.post(list, {
      kind: 'oidc',
      display_name: 'Acme SSO',
      slug: '',
      issuer: 'https://sso.acme.example',
      tenant: 'ignored-for-oidc',
      api_base_url: '',
      client_id: 'latchkey',
      client_secret: SECRET,
      scopes: 'openid email',
      claim_mapping: 'email = mail\r\n\r\ngiven_name=first_name',
      trust_email: 'yes',
      trust_mfa: 'yes',
      enabled: 'yes',
    });
    expect(added.status).toBe(303);
    const id = added.headers.location.split('/').pop()!;
    const provider = await t.services.admin.upstreamProviders.get(cliActor(), p.id, id);
    expect(provider).toMatchObject({
      slug: 'acme-sso',
      displayName: 'Acme SSO',
      issuer: 'https://sso.acme.example',
      scopes: ['openid', 'email'],
      claimMapping: { email: 'mail', given_name: 'first_name' },
      trustEmail: true,
      trustMfa: true,
      storeTokens: false,
      enabled: true,
      hasClientSecret: true,
    });
    expect((await t.services.federation.providers.forSignIn(p.id, 'acme-sso'))?.clientSecret).toBe(SECRET);
    expect(await lastEvent(p.id, 'upstream_provider.created')).toMatchObject({
      ...byOperator(),
      details: { slug: 'acme-sso', client_secret_set: true },
    });

    const page = await b.follow(added);
    expect(page.status).toBe(200);
    expect(unescape(page.text)).toContain('Provider "Acme SSO" added. Register the callback URL below at Acme SSO.');
    expect(page.text).toContain(`<pre class="code-block" id="callback-url">${callback}</pre>`);
    expect(page.text).toContain('set (sealed; never shown)');
    expect(page.text).not.toContain(SECRET);
    expect(page.text).toMatch(/name="client_secret" type="password"[^>]*value=""/);
    expect(page.text).toContain('email=mail\ngiven_name=first_name');
    expect((await b.get(list)).text).toContain('Continue with Acme SSO');

    // An edit without a secret keeps it; the form as it was sent, with a new name and scopes.
    const form = {
      display_name: 'Acme Login',
      slug: 'acme',
      issuer: 'https://sso.acme.example',
      client_id: 'latchkey',
      client_secret: '',
      scopes: 'openid email profile',
      claim_mapping: '',
      trust_email: 'yes',
      enabled: 'yes',
    };
    const edited = await b.post(`${list}/${id}`, form);
    expect(edited.status).toBe(303);
    expect(unescape((await b.follow(edited)).text)).toContain('Changes saved.');
    expect(await t.services.admin.upstreamProviders.get(cliActor(), p.id, id)).toMatchObject({
      slug: 'acme',
      displayName: 'Acme Login',
      scopes: ['openid', 'email', 'profile'],
      claimMapping: {},
      trustMfa: false,
      hasClientSecret: true,
    });
    expect((await t.services.federation.providers.forSignIn(p.id, 'acme'))?.clientSecret).toBe(SECRET);
    const update = await lastEvent(p.id, 'upstream_provider.updated');
    expect(update).toMatchObject({
      ...byOperator(),
      details: { display_name: { from: 'Acme SSO', to: 'Acme Login' }, trust_mfa: { from: true, to: false } },
    });
    expect(update.details).not.toHaveProperty('client_secret_set');

    await b.post(`${list}/${id}`, { ...form, client_secret: 'the-next-secret' });
    expect((await t.services.federation.providers.forSignIn(p.id, 'acme'))?.clientSecret).toBe('the-next-secret');
    expect((await lastEvent(p.id, 'upstream_provider.updated')).details).toMatchObject({ client_secret_set: true });
    await b.get(`${list}/${id}`);
    const both = await b.post(`${list}/${id}`, { ...form, client_secret: 'x', remove_secret: 'yes' });
    expect(both.status).toBe(400);
    expect(unescape(both.text)).toContain('New client secret: give a new secret or tick "Remove the secret", not both');
    await b.post(`${list}/${id}`, { ...form, remove_secret: 'yes' });
    expect(await t.services.admin.upstreamProviders.get(cliActor(), p.id, id)).toMatchObject({
      hasClientSecret: false,
    });
    expect((await b.get(`${list}/${id}`)).text).toContain('none: a public client (PKCE only)');

    // Disabled: the button goes, the provider stays.
    await b.post(`${list}/${id}`, { ...form, enabled: '' });
    expect(await t.services.federation.providers.enabledFor(p.id)).toEqual([]);

    const u = await buildUser(t.services, p.id);
    await identities.insertUnlessLinked(
      t.database.db,
      {
        id: newId(),
        platformId: p.id,
        userId: u.id,
        providerId: id,
        subject: 's-1',
        email: u.email,
        sealedTokens: null,
      },
      new Date(),
    );
    const shown = await b.get(`${list}/${id}`);
    expect(shown.text).toContain('the 1 account linked through it is unlinked');
    const unconfirmed = await b.post(`${list}/${id}/delete`, {});
    expect(unconfirmed.status).toBe(400);
    expect(unescape(unconfirmed.text)).toContain('tick "I understand" to remove the provider');
    const removed = await b.post(`${list}/${id}/delete`, { confirm: 'yes' });
    expect({ status: removed.status, location: removed.headers.location }).toEqual({ status: 303, location: list });
    expect(unescape((await b.follow(removed)).text)).toContain('Provider "Acme Login" removed, with 1 linked account.');
    expect(await lastEvent(p.id, 'upstream_provider.deleted')).toMatchObject({
      ...byOperator(),
      details: { slug: 'acme', identities_unlinked: 1 },
    });
    expect((await b.get(`${list}/${id}`)).status).toBe(404);
  });

  it('adds the presets with their defaults (an empty form but kind and client id)', async () => {
    const p = await buildPlatform(t.services);
    const list = `/admin/platforms/${p.id}/upstream-providers`;
    await b.get(list);
    const blank = {
      display_name: '',
      slug: '',
      issuer: '',
      tenant: '',
      api_base_url: '',
      client_secret: '',
      scopes: '',
      claim_mapping: '',
      trust_email: 'default',
      enabled: 'yes',
    };
    expect((await b.post(list, { ...blank, kind: 'google', client_id: 'g' })).status).toBe(303);
    await b.get(list);
    expect(
      (
        await b.post(list, {
          ...blank,
          kind: 'microsoft',
          client_id: 'ms',
          tenant: 'contoso.example',
          api_base_url: 'https://ignored.example',
        })
      ).status,
    ).toBe(303);
    await b.get(list);
    expect(
      (await b.post(list, { ...blank, kind: 'github', client_id: 'gh', client_secret: 's', trust_email: 'no' })).status,
    ).toBe(303);
    const all = await t.services.admin.upstreamProviders.list(cliActor(), p.id);
    expect(all.map((x) => [x.slug, x.displayName, x.issuer, x.trustEmail, x.apiBaseUrl])).toEqual([
      ['google', 'Google', 'https://accounts.google.com', true, null],
      ['microsoft', 'Microsoft', 'https://login.microsoftonline.com/contoso.example/v2.0', false, null],
      ['github', 'GitHub', 'https://github.com', false, 'https://api.github.com'],
    ]);
    const page = await b.get(list);
    for (const name of ['Continue with Google', 'Continue with Microsoft', 'Continue with GitHub'])
      expect(page.text).toContain(name);
    // The edit page shows the kind's own field only.
    const github = all[2];
    const ghPage = await b.get(`${list}/${github.id}`);
    expect(ghPage.text).toContain('name="api_base_url"');
    expect(ghPage.text).not.toContain('name="tenant"');
  });

  it('bad input re-renders the form as typed with the API message and a 400; nothing stored; no secret echoed', async () => {
    const p = await buildPlatform(t.services);
    const list = `/admin/platforms/${p.id}/upstream-providers`;
    const cases: Array<[Record<string, string>, string]> = [
      [
        { kind: 'oidc', display_name: 'Acme', issuer: '', client_id: 'x' },
        'Issuer: required for an OpenID Connect provider',
      ],
      [
        { kind: 'oidc', display_name: 'Acme', issuer: 'http://sso.acme.example', client_id: 'x' },
        'Issuer: must use https',
      ],
      [{ kind: 'google', client_id: '' }, 'Client id: must not be empty'],
      [{ kind: 'google', client_id: 'x', scopes: 'email' }, 'Scopes: must include openid'],
      [{ kind: 'google', client_id: 'x', claim_mapping: 'email' }, 'Claim mapping: write one LOCAL=UPSTREAM per line'],
      [{ kind: 'google', client_id: 'x', claim_mapping: 'groups=roles' }, 'Claim mapping: unknown claim "groups"'],
      [{ kind: 'github', client_id: 'x', client_secret: '' }, 'Client secret: required for GitHub'],
      [{ kind: 'google', client_id: 'x', slug: 'Bad Slug' }, 'Slug: lowercase letters, digits and dashes'],
      [{ kind: 'facebook', client_id: 'x' }, 'Kind: must be one of oidc, google, microsoft, github'],
    ];
    for (const [fields, message] of cases) {
      await b.get(list);
      const res = await b.post(list, { client_secret: 'typed-secret-not-echoed', ...fields });
      expect({ fields, status: res.status }).toEqual({ fields, status: 400 });
      expect(unescape(res.text)).toContain(message);
      expect(res.text).toContain(`value="${fields.client_id}"`);
      expect(res.text).not.toContain('typed-secret-not-echoed');
    }
    expect(await t.services.admin.upstreamProviders.list(cliActor(), p.id)).toEqual([]);
    expect(await lastEvent(p.id, 'upstream_provider.created')).toBeUndefined();

    await t.services.admin.upstreamProviders.create(cliActor(), p.id, { kind: 'google', client_id: 'g' });
    await b.get(list);
    const taken = await b.post(list, { kind: 'google', client_id: 'again' });
    expect(taken.status).toBe(409);
    expect(unescape(taken.text)).toContain('Slug: a provider "google" already exists on this platform');
    const csrf = await b.post(
      list,
      { kind: 'oidc', display_name: 'X', issuer: 'https://x.example', client_id: 'x' },
      false,
    );
    expect(csrf.status).toBe(403);
    expect(await t.services.admin.upstreamProviders.list(cliActor(), p.id)).toHaveLength(1);
  });

  it('unknown providers are 404 pages, a malformed one 400, never a 5xx; a platform operator sees only its platform', async () => {
    const p = await buildPlatform(t.services);
    const other = await buildPlatform(t.services);
    const theirs = await t.services.admin.upstreamProviders.create(cliActor(), other.id, {
      kind: 'google',
      client_id: 'g',
    });
    const list = `/admin/platforms/${p.id}/upstream-providers`;
    for (const path of [`${list}/github`, `${list}/00000000-0000-4000-8000-000000000000`, `${list}/${theirs.id}`])
      expect({ path, status: (await b.get(path)).status }).toEqual({ path, status: 404 });
    expect((await b.get(`${list}/Not%20A%20Slug`)).status).toBe(400);

    const scopedEmail = (await buildOperator(t.services, { platformId: p.id })).email;
    const scoped = consoleBrowser(t.app);
    await signInConsole(scoped, scopedEmail, () => new Date());
    expect((await scoped.get(list)).status).toBe(200);
    expect((await scoped.get(`/admin/platforms/${other.id}/upstream-providers`)).status).toBe(404);
    expect((await scoped.get(`/admin/platforms/${other.id}/upstream-providers/${theirs.id}`)).status).toBe(404);
    await scoped.get(list);
    expect(
      (await scoped.post(`/admin/platforms/${other.id}/upstream-providers/${theirs.id}/delete`, { confirm: 'yes' }))
        .status,
    ).toBe(404);
    expect(await t.services.admin.upstreamProviders.list(cliActor(), other.id)).toHaveLength(1);
  });
});

describe("admin console: a user's linked accounts", () => {
  it('lists them on the user page and unlinks one (the operator as actor); unknown ids are 404', async () => {
    const p = await buildPlatform(t.services);
    const google = await t.services.admin.upstreamProviders.create(cliActor(), p.id, {
      kind: 'google',
      client_id: 'g',
    });
    const u = await buildUser(t.services, p.id);
    const identity = (await identities.insertUnlessLinked(
      t.database.db,
      {
        id: newId(),
        platformId: p.id,
        userId: u.id,
        providerId: google.id,
        subject: '10769150350006150715113082367',
        email: 'grace@gmail.example',
        sealedTokens: null,
      },
      new Date(),
    ))!;
    const page = `/admin/platforms/${p.id}/users/${u.id}`;
    const shown = await b.get(page);
    expect(shown.text).toContain('Linked accounts');
    expect(shown.text).toContain('grace@gmail.example');
    expect(shown.text).toContain('10769150350006150715113082367');
    expect(shown.text).toContain(`action="${page}/identities/${identity.id}/unlink"`);

    for (const path of [
      `${page}/identities/nope/unlink`,
      `${page}/identities/00000000-0000-4000-8000-000000000000/unlink`,
    ]) {
      await b.get(page);
      expect({ path, status: (await b.post(path, {})).status }).toEqual({ path, status: 404 });
    }
    await b.get(page);
    const unlinked = await b.post(`${page}/identities/${identity.id}/unlink`, {});
    expect({ status: unlinked.status, location: unlinked.headers.location }).toEqual({ status: 303, location: page });
    const after = await b.follow(unlinked);
    expect(after.text).toContain('Google account unlinked.');
    expect(after.text).toContain('No upstream account is linked');
    expect(await lastEvent(p.id, 'identity.unlinked')).toMatchObject({
      ...byOperator(),
      subject: u.id,
      details: { provider: 'google', identity_id: identity.id },
    });
  });
});
