import { startClockedProvider, newBrowser, pathOf, type ClockedProvider } from '../support/standard-op';
import { buildClient, buildUser } from '../factories';
import { authorizeQuery, exchange, jwtPayload } from '../support/account-flows';
import { waitForMail } from '../support/outbox';
import { startGoogleStandIn, MICROSOFT_TID, type GoogleStandIn } from '../support/upstreams/google-stand-in';
import { startGitHubStandIn, type GitHubStandIn } from '../support/upstreams/github-stand-in';
import { microsoftIssuer } from '../../src/domain/upstream';
import type { UpstreamProviderInput } from '../../src/services/federation/providers.service';
import { APP_REDIRECT, auditKinds, continueWith, identitiesOf, valueOf } from './support';

/**
 * One sign-up per preset over HTTP, through the downstream's router (authorize → "Continue with …"
 * → the stand-in → the platform's callback → the sign-up page → consent → the app's code): Google
 * with its trusted, verified email; Microsoft for one tenant at its documented paths; GitHub with no
 * verified email, where the person types one. The stand-ins consent at once, so their leg is one
 * redirect.
 */

let p: ClockedProvider;
const s = () => p.t.services;

beforeAll(async () => {
  p = await startClockedProvider();
});
afterAll(async () => {
  await p.close();
});

/** A downstream platform with an app and the provider. */
async function downstream(input: UpstreamProviderInput) {
  const { platform } = await s().platforms.createPlatform(`Downstream ${Math.random().toString(36).slice(2, 8)}`);
  const app = await buildClient(s(), platform.id, { redirectUris: [APP_REDIRECT] });
  const provider = await s().federation.providers.create(platform.id, input);
  return { down: { id: platform.id }, app, provider };
}
type Downstream = Awaited<ReturnType<typeof downstream>>;

/** The app's authorization → "Continue with NAME" → the stand-in's redirect → the callback's page. */
async function throughStandIn(d: Downstream) {
  const b = newBrowser(p);
  await b.get(`/oauth/authorize?${authorizeQuery(d.down, d.app, { scope: 'openid profile email' })}`);
  expect(b.html).toContain(`Continue with ${d.provider.displayName}`);
  const authorizationUrl = await continueWith(b, `/upstream/${d.provider.slug}`);
  const res = await fetch(authorizationUrl, { redirect: 'manual' });
  const callback = res.headers.get('location');
  if (res.status !== 302 || !callback) throw new Error(`the stand-in answered ${res.status}`);
  const back = await b.get(pathOf(callback));
  return { b, authorizationUrl, back };
}

const signUpForm = {
  given_name: 'Ada',
  family_name: 'Lovelace',
  birthdate: '1990-05-17',
  phone_number: '',
  password: '',
};

/** Consent, then the app's ID token claims. */
async function consented(b: ReturnType<typeof newBrowser>, d: Downstream) {
  expect(b.pageTitle()).toContain('wants to access');
  const done = await b.submit('/consent', { decision: 'allow' });
  expect(done.location?.startsWith(`${APP_REDIRECT}?code=`)).toBe(true);
  return jwtPayload((await exchange(p.t.app, d.down, d.app, done.location!)).id_token);
}

describe('Google', () => {
  let g: GoogleStandIn;
  beforeAll(async () => {
    g = await startGoogleStandIn();
  });
  afterAll(async () => {
    await g.close();
  });
  beforeEach(() => {
    g.knobs = {};
  });
  const google = () =>
    downstream({ kind: 'google', issuer: g.issuer, clientId: g.clientId, clientSecret: g.clientSecret });

  it('sign-up with Google’s verified email, trusted by the preset: the new user is verified; amr fed', async () => {
    const d = await google();
    expect(d.provider.trustEmail).toBe(true);
    const { b, authorizationUrl } = await throughStandIn(d);
    expect(authorizationUrl.pathname).toBe('/o/oauth2/v2/auth');
    expect(b.pageTitle()).toBe('Create your account');
    expect(valueOf(b.html, 'email')).toBe('ada@example.com');
    expect(b.html).toMatch(/id="email"[^>]*readonly/);
    expect(valueOf(b.html, 'given_name')).toBe('Ada');
    await b.submit('/signup', signUpForm);
    const claims = await consented(b, d);
    const local = await s().users.findByEmail(d.down.id, 'ada@example.com');
    expect(local?.emailVerified).toBe(true);
    expect(claims).toMatchObject({ sub: local!.id, email: 'ada@example.com', email_verified: true, amr: ['fed'] });
    const [identity] = await identitiesOf(p, d.down.id);
    expect(identity).toMatchObject({ user_id: local!.id, provider_id: d.provider.id, subject: g.user.sub });
  });

  it.each([
    ['an aud that is another client', { wrongAudience: true }],
    ['an exp ten minutes past', { expired: true }],
  ])(
    'an ID token with %s: the failure page naming Google, invalid_response audited, nothing created',
    async (_what, knobs) => {
      const d = await google();
      g.knobs = knobs;
      const { b, back } = await throughStandIn(d);
      expect(back.res.status).toBe(400);
      expect(b.pageTitle()).toBe('Couldn&#39;t sign in with Google');
      expect(await auditKinds(p, d.down.id)).toContainEqual({
        kind: 'sign_in.failed',
        details: { method: 'upstream', provider: 'google', reason: 'invalid_response' },
      });
      expect(await identitiesOf(p, d.down.id)).toHaveLength(0);
      expect(await s().users.findByEmail(d.down.id, 'ada@example.com')).toBeUndefined();
    },
  );
});

describe('Microsoft, one tenant', () => {
  let ms: GoogleStandIn;
  beforeAll(async () => {
    ms = await startGoogleStandIn({ microsoftTenant: MICROSOFT_TID });
    // A v2.0 ID token as Entra shapes it: a pairwise sub, the object id, no email_verified.
    ms.user = {
      sub: 'AAAAAAAAAAAAAAAAAAAAAIkzqFVrSaSaFHy782bbtaQ',
      oid: '00000000-0000-0000-66f3-3332eca7ea81',
      name: 'Ada Lovelace',
      preferred_username: 'ada@contoso.example',
      email: 'ada@contoso.example',
    };
  });
  afterAll(async () => {
    await ms.close();
  });

  it('the tenant option names Microsoft’s issuer for that tenant; the stand-in is that issuer on its own origin', async () => {
    const { provider } = await downstream({ kind: 'microsoft', tenant: MICROSOFT_TID, clientId: ms.clientId });
    expect(provider.issuer).toBe(`https://login.microsoftonline.com/${MICROSOFT_TID}/v2.0`);
    expect(provider.issuer).toBe(microsoftIssuer(MICROSOFT_TID));
    expect(ms.issuer).toBe(provider.issuer.replace('https://login.microsoftonline.com', ms.base));
  });

  it('sign-up through the callback at Microsoft’s paths: the subject is sub (not oid), the email unverified (not trusted by the preset), the verification mail', async () => {
    const d = await downstream({
      kind: 'microsoft',
      issuer: ms.issuer,
      clientId: ms.clientId,
      clientSecret: ms.clientSecret,
    });
    expect(d.provider.trustEmail).toBe(false);
    const { b, authorizationUrl } = await throughStandIn(d);
    expect(authorizationUrl.pathname).toBe(`/${MICROSOFT_TID}/oauth2/v2.0/authorize`);
    expect(ms.tokenRefusals).toEqual([]);
    expect(b.pageTitle()).toBe('Create your account');
    expect(valueOf(b.html, 'email')).toBe('ada@contoso.example');
    await b.submit('/signup', signUpForm);
    const claims = await consented(b, d);
    const local = await s().users.findByEmail(d.down.id, 'ada@contoso.example');
    expect(local?.emailVerified).toBe(false);
    expect(claims).toMatchObject({ sub: local!.id, amr: ['fed'] });
    const [identity] = await identitiesOf(p, d.down.id);
    expect(identity).toMatchObject({
      user_id: local!.id,
      provider_id: d.provider.id,
      subject: ms.user.sub,
      email: 'ada@contoso.example',
    });
    await waitForMail(p.t.config.dataDir, 'ada@contoso.example', /Verify your email address/);
    expect(await auditKinds(p, d.down.id)).toContainEqual({
      kind: 'sign_up',
      details: { method: 'upstream', provider: 'microsoft' },
    });
  });
});

describe('Microsoft, one tenant named by its domain', () => {
  let ms: GoogleStandIn;
  beforeAll(async () => {
    ms = await startGoogleStandIn({ microsoftTenant: MICROSOFT_TID, microsoftDomain: 'contoso.example' });
    ms.user = {
      sub: 'AAAAAAAAAAAAAAAAAAAAAIkzqFVrSaSaFHy782bbtaQ',
      oid: '00000000-0000-0000-66f3-3332eca7ea81',
      name: 'Ada Lovelace',
      email: 'ada@contoso.example',
    };
  });
  afterAll(async () => {
    await ms.close();
  });

  it('discovery at the domain publishes the tenant id’s issuer: the sign-in verifies against it and reaches the sign-up page', async () => {
    const { provider } = await downstream({ kind: 'microsoft', tenant: 'contoso.example', clientId: ms.clientId });
    expect(provider.issuer).toBe('https://login.microsoftonline.com/contoso.example/v2.0');
    const d = await downstream({
      kind: 'microsoft',
      issuer: `${ms.base}/contoso.example/v2.0`,
      clientId: ms.clientId,
      clientSecret: ms.clientSecret,
    });
    const { b, back } = await throughStandIn(d);
    expect(back.res.status).toBe(200);
    expect(b.pageTitle()).toBe('Create your account');
    expect(valueOf(b.html, 'email')).toBe('ada@contoso.example');
  });

  it('consumers publishes its one tenant by id, as a domain does: the sign-in verifies against that issuer', async () => {
    const consumersTid = '9188040d-6c67-4c5b-b112-36a304b66dad';
    const personal = await startGoogleStandIn({ microsoftTenant: consumersTid, microsoftDomain: 'consumers' });
    try {
      personal.user = { ...ms.user, tid: consumersTid };
      const d = await downstream({
        kind: 'microsoft',
        issuer: `${personal.base}/consumers/v2.0`,
        clientId: personal.clientId,
        clientSecret: personal.clientSecret,
      });
      const { b, back } = await throughStandIn(d);
      expect(back.res.status).toBe(200);
      expect(b.pageTitle()).toBe('Create your account');
    } finally {
      await personal.close();
    }
  });

  it.each([
    ['another origin', 'https://login.evil.example/9a1d7c2e-0000-4000-8000-00000000a1d7/v2.0'],
    ['no tenant id', 'DOMAIN'],
    ['the multi-tenant template', 'TEMPLATE'],
  ])(
    'a domain whose discovery publishes an issuer of %s: refused before the person leaves',
    async (_what, published) => {
      const d = await downstream({
        kind: 'microsoft',
        issuer: `${ms.base}/contoso.example/v2.0`,
        clientId: ms.clientId,
        clientSecret: ms.clientSecret,
      });
      ms.knobs = {
        discoveryIssuer: published
          .replace('DOMAIN', `${ms.base}/contoso.example/v2.0`)
          .replace('TEMPLATE', `${ms.base}/{tenantid}/v2.0`),
      };
      try {
        const b = newBrowser(p);
        await b.get(`/oauth/authorize?${authorizeQuery(d.down, d.app, { scope: 'openid profile email' })}`);
        const started = await b.submit(`/upstream/${d.provider.slug}`, {});
        expect(started.location).toBeUndefined();
        expect(b.pageTitle()).toBe('Couldn&#39;t sign in with Microsoft');
        expect(
          ms.authorizeRequests.filter(
            (q) => q.get('client_id') === ms.clientId && q.get('redirect_uri')?.includes(d.down.id),
          ),
        ).toHaveLength(0);
      } finally {
        ms.knobs = {};
      }
    },
  );

  it('an ID token whose iss names another tenant than the one discovery published is refused', async () => {
    const d = await downstream({
      kind: 'microsoft',
      issuer: `${ms.base}/contoso.example/v2.0`,
      clientId: ms.clientId,
      clientSecret: ms.clientSecret,
    });
    ms.knobs = { wrongIssuer: true };
    try {
      const { b, back } = await throughStandIn(d);
      expect(back.res.status).toBe(400);
      expect(b.pageTitle()).toBe('Couldn&#39;t sign in with Microsoft');
    } finally {
      ms.knobs = {};
    }
  });
});

describe('GitHub without a verified email', () => {
  let gh: GitHubStandIn;
  beforeAll(async () => {
    gh = await startGitHubStandIn();
    gh.emails = [{ email: 'octocat@example.com', primary: true, verified: false, visibility: 'public' }];
  });
  afterAll(async () => {
    await gh.close();
  });

  it('the person types an email: an existing account’s is refused (no silent link), another creates the user unverified', async () => {
    const d = await downstream({
      kind: 'github',
      issuer: gh.base,
      apiBaseUrl: gh.apiBaseUrl,
      clientId: gh.clientId,
      clientSecret: gh.clientSecret,
    });
    expect(d.provider.trustEmail).toBe(true);
    const existing = await buildUser(s(), d.down.id, { email: 'taken@example.com' });
    const { b, authorizationUrl } = await throughStandIn(d);
    expect(authorizationUrl.pathname).toBe('/login/oauth/authorize');
    expect(b.pageTitle()).toBe('Create your account');
    expect(valueOf(b.html, 'email') ?? '').toBe('');
    expect(b.html).not.toMatch(/id="email"[^>]*readonly/);
    expect(valueOf(b.html, 'given_name')).toBe('The');

    const refused = await b.submit('/signup', { ...signUpForm, email: existing.email });
    expect(refused.res.status).toBe(400);
    expect(b.pageTitle()).toBe('Create your account');
    expect(b.html).toContain('An account with this email already exists');
    expect(await identitiesOf(p, d.down.id)).toHaveLength(0);

    await b.submit('/signup', { ...signUpForm, email: 'octocat-typed@example.com' });
    const claims = await consented(b, d);
    const local = await s().users.findByEmail(d.down.id, 'octocat-typed@example.com');
    expect(local).toBeDefined();
    expect(local!.id).not.toBe(existing.id);
    expect(local!.emailVerified).toBe(false);
    expect(claims).toMatchObject({ sub: local!.id, amr: ['fed'] });
    const identities = await identitiesOf(p, d.down.id);
    expect(identities).toHaveLength(1);
    expect(identities[0]).toMatchObject({ user_id: local!.id, subject: '583231', email: null });
    await waitForMail(p.t.config.dataDir, 'octocat-typed@example.com', /Verify your email address/);
  });
});
