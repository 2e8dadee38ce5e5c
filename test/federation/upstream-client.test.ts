import http from 'node:http';
import pino from 'pino';
import type { AddressInfo } from 'node:net';
import {
  startClockedProvider,
  standardOp,
  newBrowser,
  drive,
  pathOf,
  type ClockedProvider,
} from '../support/standard-op';
import { buildClient, buildUser } from '../factories';
import { startGoogleStandIn, MICROSOFT_TID, type GoogleStandIn } from '../support/upstreams/google-stand-in';
import { startGitHubStandIn, type GitHubStandIn } from '../support/upstreams/github-stand-in';
import {
  createUpstreamClient,
  UpstreamSignInError,
  type PendingUpstream,
} from '../../src/services/federation/upstream-client';
import type { UpstreamProviderInput } from '../../src/services/federation/providers.service';

/**
 * The upstream client against real servers: another Latchkey platform (generic OIDC), and local
 * stand-ins speaking Google's, Microsoft's multi-tenant and GitHub's documented endpoints.
 */

let p: ClockedProvider;
const s = () => p.t.services;
const callbackOf = (platformId: string) => `${p.base}/platforms/${platformId}/upstream/callback`;

beforeAll(async () => {
  p = await startClockedProvider();
});
afterAll(async () => {
  await p.close();
});

async function newPlatform() {
  const { platform } = await s().platforms.createPlatform(`Downstream ${Math.random().toString(36).slice(2, 8)}`);
  return platform.id;
}

/** The upstream's browser leg for stand-ins that consent at once: GET the authorization URL, return where it redirects. */
async function redirectOf(authorizationUrl: string): Promise<URL> {
  const res = await fetch(authorizationUrl, { redirect: 'manual' });
  const location = res.headers.get('location');
  if (res.status !== 302 || !location) throw new Error(`authorization answered ${res.status}`);
  return new URL(location);
}

async function begin(
  platformId: string,
  slug: string,
  extra: { prompt?: string; maxAge?: number; loginHint?: string } = {},
) {
  const started = await s().federation.client.begin(platformId, slug, {
    redirectUri: callbackOf(platformId),
    ...extra,
  });
  if (!started) throw new Error(`no provider ${slug}`);
  return started;
}

/** begin → the upstream's redirect → finish. */
async function signIn(
  platformId: string,
  slug: string,
  tamper?: (callback: URL, pending: PendingUpstream) => PendingUpstream,
) {
  const { authorizationUrl, pending } = await begin(platformId, slug);
  const callback = await redirectOf(authorizationUrl);
  return s().federation.client.finish(platformId, tamper ? tamper(callback, pending) : pending, callback);
}

async function failureOf(work: Promise<unknown>): Promise<UpstreamSignInError> {
  const err = await work.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof UpstreamSignInError)) throw new Error(`expected an UpstreamSignInError, got ${String(err)}`);
  return err;
}

async function closedPort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('generic OpenID Connect: another Latchkey platform as the upstream', () => {
  it('signs in through the upstream’s hosted pages and returns the verified profile', async () => {
    const op = await standardOp(p);
    const downstream = await newPlatform();
    const client = await buildClient(s(), op.platformId, { redirectUris: [callbackOf(downstream)] });
    const user = await buildUser(s(), op.platformId, { givenName: 'Grace', familyName: 'Hopper' });
    await s().federation.providers.create(downstream, {
      kind: 'oidc',
      displayName: 'Acme ID',
      issuer: op.issuer,
      clientId: client.id,
      clientSecret: client.secret,
    });

    const { authorizationUrl, pending, provider } = await begin(downstream, 'acme-id', {
      maxAge: 600,
      prompt: 'login',
    });
    expect(provider.displayName).toBe('Acme ID');
    const url = new URL(authorizationUrl);
    const endpoint = new URL(op.discovery.authorization_endpoint);
    expect(`${url.origin}${url.pathname}`).toBe(`${endpoint.origin}${endpoint.pathname}`);
    for (const [k, v] of endpoint.searchParams) expect(url.searchParams.get(k)).toBe(v);
    expect(Object.fromEntries(url.searchParams)).toMatchObject({
      response_type: 'code',
      client_id: client.id,
      redirect_uri: callbackOf(downstream),
      scope: 'openid email profile',
      code_challenge_method: 'S256',
      state: pending.state,
      nonce: pending.nonce,
      prompt: 'login',
      max_age: '600',
    });

    const b = newBrowser(p);
    const { callback } = await drive(b, await b.get(pathOf(authorizationUrl)), user);
    expect(callback.href.startsWith(callbackOf(downstream))).toBe(true);
    const profile = await s().federation.client.finish(downstream, pending, callback);
    expect(profile).toMatchObject({
      subject: expect.any(String),
      email: user.email,
      givenName: 'Grace',
      familyName: 'Hopper',
    });
    expect(profile.providerId).toBe(provider.id);
    expect(profile.tokens).toBeUndefined();
  });
});

describe('Google stand-in', () => {
  let g: GoogleStandIn;
  let platformId: string;
  const input = (extra: Partial<UpstreamProviderInput> = {}): UpstreamProviderInput => ({
    kind: 'google',
    issuer: g.issuer,
    clientId: g.clientId,
    clientSecret: g.clientSecret,
    ...extra,
  });

  beforeAll(async () => {
    g = await startGoogleStandIn();
    platformId = await newPlatform();
    await s().federation.providers.create(platformId, input());
  });
  afterAll(async () => {
    await g.close();
  });
  beforeEach(() => {
    g.knobs = {};
    g.user = {
      sub: '110169484474386276334',
      email: 'ada@example.com',
      email_verified: true,
      given_name: 'Ada',
      family_name: 'Lovelace',
      name: 'Ada Lovelace',
      picture: 'https://lh3.googleusercontent.com/a/ada',
      hd: 'example.com',
    };
  });

  it('builds the authorization request: PKCE S256, state, nonce, the preset scopes; prompt, max_age and login_hint when given', async () => {
    const { authorizationUrl, pending } = await begin(platformId, 'google', {
      prompt: 'login',
      maxAge: 0,
      loginHint: 'ada@example.com',
    });
    const q = new URL(authorizationUrl).searchParams;
    expect(authorizationUrl.startsWith(`${g.base}/o/oauth2/v2/auth?`)).toBe(true);
    expect(Object.fromEntries(q)).toMatchObject({
      client_id: g.clientId,
      response_type: 'code',
      redirect_uri: callbackOf(platformId),
      scope: 'openid email profile',
      code_challenge_method: 'S256',
      state: pending.state,
      nonce: pending.nonce,
      prompt: 'login',
      max_age: '0',
      login_hint: 'ada@example.com',
    });
    expect(q.get('code_challenge')).toMatch(/^[\w-]{43}$/);
    expect(pending).toMatchObject({ slug: 'google', redirectUri: callbackOf(platformId), maxAge: 0 });
    expect(pending.codeVerifier).not.toBe(q.get('code_challenge'));
  });

  it('returns the profile from the verified ID token, email_verified as Google said it, no tokens kept', async () => {
    const profile = await signIn(platformId, 'google');
    expect(profile).toEqual({
      providerId: expect.any(String),
      subject: '110169484474386276334',
      email: 'ada@example.com',
      emailVerified: true,
      givenName: 'Ada',
      familyName: 'Lovelace',
      name: 'Ada Lovelace',
      picture: 'https://lh3.googleusercontent.com/a/ada',
      amr: null,
    });
    g.user = { sub: '2', email: 'bob@example.com', email_verified: false, amr: ['pwd', 'otp'] };
    expect(await signIn(platformId, 'google')).toMatchObject({
      subject: '2',
      email: 'bob@example.com',
      emailVerified: false,
      givenName: null,
      amr: ['pwd', 'otp'],
    });
  });

  it('checks max_age against the ID token’s auth_time: within it accepted, older refused (invalid_response)', async () => {
    g.knobs.authTimeAgoSeconds = 30;
    const fresh = await begin(platformId, 'google', { maxAge: 60 });
    expect(
      (await s().federation.client.finish(platformId, fresh.pending, await redirectOf(fresh.authorizationUrl))).subject,
    ).toBe('110169484474386276334');

    // the person signed in at Google ten minutes ago: too old for max_age=60
    g.knobs.authTimeAgoSeconds = 600;
    const stale = await begin(platformId, 'google', { maxAge: 60 });
    const err = await failureOf(
      s().federation.client.finish(platformId, stale.pending, await redirectOf(stale.authorizationUrl)),
    );
    expect({ reason: err.reason, providerName: err.providerName }).toEqual({
      reason: 'invalid_response',
      providerName: 'Google',
    });
    // without max_age the same auth_time is fine
    expect((await signIn(platformId, 'google')).subject).toBe('110169484474386276334');
  });

  it('reads userinfo when the ID token has no email or name', async () => {
    g.knobs.minimalIdToken = true;
    expect(await signIn(platformId, 'google')).toMatchObject({
      subject: '110169484474386276334',
      email: 'ada@example.com',
      emailVerified: true,
      name: 'Ada Lovelace',
    });
  });

  it.each([
    ['a nonce other than the request’s', { wrongNonce: true }],
    ['another issuer', { wrongIssuer: true }],
    ['a signature by a key not in the JWKS', { otherKey: true }],
    ['an aud that is another client', { wrongAudience: true }],
    ['an exp ten minutes past', { expired: true }],
  ])('refuses an ID token with %s: invalid_response', async (_what, knobs) => {
    g.knobs = knobs;
    const err = await failureOf(signIn(platformId, 'google'));
    expect({ reason: err.reason, providerName: err.providerName }).toEqual({
      reason: 'invalid_response',
      providerName: 'Google',
    });
  });

  it('an error answer from Google: upstream_error with its code', async () => {
    g.knobs.deny = true;
    const err = await failureOf(signIn(platformId, 'google'));
    expect({ reason: err.reason, upstreamError: err.upstreamError }).toEqual({
      reason: 'upstream_error',
      upstreamError: 'access_denied',
    });
  });

  it('a callback whose state is not the pending one: state_mismatch, and the code is not spent', async () => {
    const { authorizationUrl, pending } = await begin(platformId, 'google');
    const callback = await redirectOf(authorizationUrl);
    const forged = new URL(callback);
    forged.searchParams.set('state', 'another-state');
    expect((await failureOf(s().federation.client.finish(platformId, pending, forged))).reason).toBe('state_mismatch');
    // an error answer that is not for this request is not believed either
    const foreignError = new URL(`${callbackOf(platformId)}?error=access_denied&state=someone-else`);
    expect((await failureOf(s().federation.client.finish(platformId, pending, foreignError))).reason).toBe(
      'state_mismatch',
    );
    // the genuine callback still completes
    expect((await s().federation.client.finish(platformId, pending, callback)).subject).toBe('110169484474386276334');
  });

  it('PKCE: a code redeemed with another verifier is refused by Google: invalid_response', async () => {
    g.tokenRefusals.length = 0;
    const err = await failureOf(
      signIn(platformId, 'google', (_cb, pending) => ({ ...pending, codeVerifier: 'x'.repeat(43) })),
    );
    expect(err.reason).toBe('invalid_response');
    expect(g.tokenRefusals).toEqual(['invalid_grant']);
  });

  it('the token endpoint answering 500: unreachable', async () => {
    g.knobs.tokenError500 = true;
    expect((await failureOf(signIn(platformId, 'google'))).reason).toBe('unreachable');
  });

  it('an upstream that does not answer: unreachable from begin (discovery)', async () => {
    const other = await newPlatform();
    await s().federation.providers.create(other, input({ issuer: `http://127.0.0.1:${await closedPort()}` }));
    const err = await failureOf(begin(other, 'google'));
    expect({ reason: err.reason, providerName: err.providerName }).toEqual({
      reason: 'unreachable',
      providerName: 'Google',
    });
  });

  it('unknown or disabled slug: undefined', async () => {
    const other = await newPlatform();
    await s().federation.providers.create(other, input({ enabled: false }));
    expect(await s().federation.client.begin(other, 'google', { redirectUri: callbackOf(other) })).toBeUndefined();
    expect(
      await s().federation.client.begin(platformId, 'nope', { redirectUri: callbackOf(platformId) }),
    ).toBeUndefined();
  });

  it('a provider removed between begin and callback: state_mismatch', async () => {
    const other = await newPlatform();
    await s().federation.providers.create(other, input());
    const { authorizationUrl, pending } = await begin(other, 'google');
    const callback = await redirectOf(authorizationUrl);
    await s().federation.providers.remove(other, 'google');
    expect((await failureOf(s().federation.client.finish(other, pending, callback))).reason).toBe('state_mismatch');
  });

  it('applies the claim mapping (local claim → the upstream’s name)', async () => {
    const other = await newPlatform();
    await s().federation.providers.create(
      other,
      input({
        slug: 'mapped',
        claimMapping: { email: 'mail', given_name: 'first', family_name: 'last', email_verified: 'mail_verified' },
      }),
    );
    g.user = {
      sub: '7',
      email: 'ignored@example.com',
      email_verified: false,
      mail: 'mapped@example.com',
      mail_verified: true,
      first: 'Mapped',
      last: 'Person',
    };
    expect(await signIn(other, 'mapped')).toMatchObject({
      subject: '7',
      email: 'mapped@example.com',
      emailVerified: true,
      givenName: 'Mapped',
      familyName: 'Person',
    });
  });

  it('keeps the upstream’s tokens only when the provider stores them', async () => {
    const other = await newPlatform();
    await s().federation.providers.create(other, input({ slug: 'keeps', storeTokens: true }));
    const profile = await signIn(other, 'keeps');
    expect(profile.tokens).toEqual({
      accessToken: expect.stringMatching(/^ya29\./),
      refreshToken: expect.any(String),
      idToken: expect.any(String),
      expiresAt: expect.any(Number),
    });
    expect(profile.tokens!.expiresAt! - Math.floor(p.now().getTime() / 1000)).toBe(3599);
    expect((await signIn(platformId, 'google')).tokens).toBeUndefined();
  });

  it('reads discovery again when the provider changes (the cache is per provider version)', async () => {
    const other = await newPlatform();
    await s().federation.providers.create(other, input({ slug: 'moves' }));
    expect((await begin(other, 'moves')).authorizationUrl.startsWith(g.base)).toBe(true);
    const moved = await startGoogleStandIn();
    try {
      await s().federation.providers.update(other, 'moves', {
        issuer: moved.issuer,
        clientId: moved.clientId,
        clientSecret: moved.clientSecret,
      });
      expect((await begin(other, 'moves')).authorizationUrl.startsWith(moved.base)).toBe(true);
    } finally {
      await moved.close();
    }
  });
});

describe('Microsoft multi-tenant stand-in (issuer https://…/{tenantid}/v2.0)', () => {
  let ms: GoogleStandIn;
  let platformId: string;

  beforeAll(async () => {
    ms = await startGoogleStandIn({ tenantTemplate: true, clientSecret: null });
    platformId = await newPlatform();
    // a public client: PKCE only, no secret
    await s().federation.providers.create(platformId, { kind: 'microsoft', issuer: ms.issuer, clientId: ms.clientId });
  });
  afterAll(async () => {
    await ms.close();
  });
  beforeEach(() => {
    ms.knobs = {};
  });

  it('accepts an ID token whose iss is the template filled with its own tid', async () => {
    expect(ms.issuer.endsWith('/common/v2.0')).toBe(true);
    const profile = await signIn(platformId, 'microsoft');
    expect(profile).toMatchObject({ subject: ms.user.sub, email: 'ada@example.com' });
    ms.knobs.tid = 'f0f0f0f0-1111-4222-8333-444444444444';
    expect((await signIn(platformId, 'microsoft')).subject).toBe(ms.user.sub);
  });

  it('refuses an ID token whose iss names another tenant than its tid', async () => {
    ms.knobs.issTid = 'f0f0f0f0-1111-4222-8333-444444444444';
    expect(ms.knobs.issTid).not.toBe(MICROSOFT_TID);
    expect((await failureOf(signIn(platformId, 'microsoft'))).reason).toBe('invalid_response');
  });

  it('still checks the nonce and the signature in template mode', async () => {
    ms.knobs.wrongNonce = true;
    expect((await failureOf(signIn(platformId, 'microsoft'))).reason).toBe('invalid_response');
    ms.knobs = { otherKey: true };
    expect((await failureOf(signIn(platformId, 'microsoft'))).reason).toBe('invalid_response');
  });

  it('passes the token endpoint’s refusal through as invalid_response, and its 500 as unreachable', async () => {
    expect(
      (
        await failureOf(
          signIn(platformId, 'microsoft', (_cb, pending) => ({ ...pending, codeVerifier: 'y'.repeat(43) })),
        )
      ).reason,
    ).toBe('invalid_response');
    ms.knobs.tokenError500 = true;
    expect((await failureOf(signIn(platformId, 'microsoft'))).reason).toBe('unreachable');
  });
});

describe('GitHub stand-in', () => {
  let gh: GitHubStandIn;
  let platformId: string;
  const octocat = () => ({
    id: 583231,
    login: 'octocat',
    name: 'The Octocat',
    email: null,
    avatar_url: 'https://avatars.githubusercontent.com/u/583231?v=4',
  });

  beforeAll(async () => {
    gh = await startGitHubStandIn();
    platformId = await newPlatform();
    await s().federation.providers.create(platformId, {
      kind: 'github',
      issuer: gh.base,
      apiBaseUrl: gh.apiBaseUrl,
      clientId: gh.clientId,
      clientSecret: gh.clientSecret,
    });
  });
  afterAll(async () => {
    await gh.close();
  });
  beforeEach(() => {
    gh.knobs = {};
    gh.user = octocat();
    gh.emails = [
      { email: 'octocat@users.noreply.example', primary: false, verified: true, visibility: null },
      { email: 'octocat@example.com', primary: true, verified: true, visibility: 'public' },
    ];
  });

  it('asks with PKCE and state, no nonce, the preset scopes; no OIDC parameters', async () => {
    const { authorizationUrl, pending } = await begin(platformId, 'github', {
      prompt: 'login',
      maxAge: 0,
      loginHint: 'a@example.com',
    });
    expect(authorizationUrl.startsWith(`${gh.base}/login/oauth/authorize?`)).toBe(true);
    const q = Object.fromEntries(new URL(authorizationUrl).searchParams);
    expect(q).toMatchObject({
      client_id: gh.clientId,
      redirect_uri: callbackOf(platformId),
      scope: 'read:user user:email',
      state: pending.state,
      code_challenge_method: 'S256',
    });
    expect(Object.keys(q)).not.toEqual(expect.arrayContaining(['nonce']));
    for (const name of ['nonce', 'prompt', 'max_age', 'login_hint']) expect(q[name]).toBeUndefined();
    expect(pending.nonce).toBe('');
  });

  it('returns the user by its numeric id with the primary verified email; calls the API as GitHub documents', async () => {
    gh.apiRequests.length = 0;
    const profile = await signIn(platformId, 'github');
    expect(profile).toEqual({
      providerId: expect.any(String),
      subject: '583231',
      email: 'octocat@example.com',
      emailVerified: true,
      givenName: 'The',
      familyName: 'Octocat',
      name: 'The Octocat',
      picture: 'https://avatars.githubusercontent.com/u/583231?v=4',
      amr: null,
    });
    expect(gh.apiRequests).toHaveLength(2);
    for (const headers of gh.apiRequests) {
      expect(headers).toMatchObject({
        accept: 'application/vnd.github+json',
        'x-github-api-version': '2022-11-28',
        authorization: expect.stringMatching(/^Bearer gho_/),
      });
      expect(headers['user-agent']).toBeTruthy();
    }
  });

  it('no primary verified email: another verified one; none verified: no email, not verified; no name: no names', async () => {
    gh.emails = [
      { email: 'primary@example.com', primary: true, verified: false, visibility: 'public' },
      { email: 'second@example.com', primary: false, verified: true, visibility: null },
    ];
    expect(await signIn(platformId, 'github')).toMatchObject({ email: 'second@example.com', emailVerified: true });
    gh.emails = [{ email: 'primary@example.com', primary: true, verified: false, visibility: 'public' }];
    gh.user = { ...octocat(), name: null, email: 'primary@example.com' };
    expect(await signIn(platformId, 'github')).toMatchObject({
      subject: '583231',
      email: null,
      emailVerified: false,
      name: null,
      givenName: null,
      familyName: null,
    });
  });

  it('a refused code (GitHub’s 200 with error=bad_verification_code): invalid_response', async () => {
    gh.knobs.refuseToken = true;
    gh.tokenRefusals.length = 0;
    expect((await failureOf(signIn(platformId, 'github'))).reason).toBe('invalid_response');
    expect(gh.tokenRefusals).toEqual(['bad_verification_code']);
  });

  it('PKCE is checked by GitHub: another verifier is refused', async () => {
    gh.tokenRefusals.length = 0;
    expect(
      (await failureOf(signIn(platformId, 'github', (_cb, pending) => ({ ...pending, codeVerifier: 'z'.repeat(43) }))))
        .reason,
    ).toBe('invalid_response');
    expect(gh.tokenRefusals).toEqual(['bad_verification_code']);
  });

  it('the API answering 500: unreachable', async () => {
    gh.knobs.api500 = true;
    expect((await failureOf(signIn(platformId, 'github'))).reason).toBe('unreachable');
  });

  it('the person denies access: upstream_error access_denied', async () => {
    gh.knobs.deny = true;
    const err = await failureOf(signIn(platformId, 'github'));
    expect({ reason: err.reason, upstreamError: err.upstreamError, providerName: err.providerName }).toEqual({
      reason: 'upstream_error',
      upstreamError: 'access_denied',
      providerName: 'GitHub',
    });
  });

  it('keeps the access token only when configured; claim mapping reads GitHub’s own fields', async () => {
    const other = await newPlatform();
    await s().federation.providers.create(other, {
      kind: 'github',
      slug: 'gh',
      issuer: gh.base,
      apiBaseUrl: gh.apiBaseUrl,
      clientId: gh.clientId,
      clientSecret: gh.clientSecret,
      storeTokens: true,
      claimMapping: { name: 'login' },
    });
    const profile = await signIn(other, 'gh');
    expect(profile).toMatchObject({ name: 'octocat', tokens: { accessToken: expect.stringMatching(/^gho_/) } });
    expect(profile.tokens!.refreshToken).toBeUndefined();
  });
});

describe('logs', () => {
  it('name the provider, the step and the reason, never a secret, code or token', async () => {
    const g = await startGoogleStandIn();
    const gh = await startGitHubStandIn();
    try {
      const lines: string[] = [];
      const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(line) });
      const client = createUpstreamClient({ ...s().deps, logger }, s().federation.providers);
      const platformId = await newPlatform();
      await s().federation.providers.create(platformId, {
        kind: 'google',
        issuer: g.issuer,
        clientId: g.clientId,
        clientSecret: g.clientSecret,
        storeTokens: true,
      });
      await s().federation.providers.create(platformId, {
        kind: 'github',
        issuer: gh.base,
        apiBaseUrl: gh.apiBaseUrl,
        clientId: gh.clientId,
        clientSecret: gh.clientSecret,
      });
      const seen: string[] = [g.clientSecret, gh.clientSecret];
      const attempt = async (slug: string) => {
        const started = (await client.begin(platformId, slug, { redirectUri: callbackOf(platformId) }))!;
        const callback = await redirectOf(started.authorizationUrl);
        seen.push(callback.searchParams.get('code') ?? '', started.pending.codeVerifier, started.pending.state);
        return client.finish(platformId, started.pending, callback).then(
          () => undefined,
          (e: unknown) => e,
        );
      };
      // a successful sign-in first: its tokens must not appear in what the failures log either
      const ok = await client.finish(
        platformId,
        ...(await (async () => {
          const started = (await client.begin(platformId, 'google', { redirectUri: callbackOf(platformId) }))!;
          return [started.pending, await redirectOf(started.authorizationUrl)] as const;
        })()),
      );
      seen.push(ok.tokens!.accessToken, ok.tokens!.refreshToken!, ok.tokens!.idToken!);
      for (const knobs of [{ wrongNonce: true }, { otherKey: true }, { tokenError500: true }]) {
        g.knobs = knobs;
        expect(await attempt('google')).toBeInstanceOf(UpstreamSignInError);
      }
      gh.knobs = { refuseToken: true };
      expect(await attempt('github')).toBeInstanceOf(UpstreamSignInError);
      gh.knobs = { api500: true };
      expect(await attempt('github')).toBeInstanceOf(UpstreamSignInError);

      const failures = lines
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .filter((l) => l.msg === 'upstream sign-in failed');
      expect(failures.map((f) => [f.provider, f.step, f.reason])).toEqual([
        ['google', 'token', 'invalid_response'],
        ['google', 'token', 'invalid_response'],
        ['google', 'token', 'unreachable'],
        ['github', 'token', 'invalid_response'],
        ['github', 'token', 'unreachable'],
      ]);
      const all = lines.join('\n');
      for (const secret of seen.filter((v) => v.length >= 8)) expect(all).not.toContain(secret);
      expect(all).not.toMatch(/gho_|ya29\.|eyJ/);
    } finally {
      await g.close();
      await gh.close();
    }
  });
});
