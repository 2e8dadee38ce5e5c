import os from 'node:os';
import { decodeJwt } from 'jose';
import fs from 'node:fs';
import path from 'node:path';
import { buildTestApp } from '../helpers';
import { buildClient, buildCode, buildPlatform, buildUser, TEST_PASSWORD } from '../factories';
import { instanceEnv, startProvider, type ProviderProcess } from '../support/provider-process';

// Two provider PROCESSES on one Postgres database, as behind a load balancer.
// The embedded database is single-process by design, so there is nothing to show there.
const embedded = process.env.TEST_DATABASE_KIND === 'embedded';
if (embedded)
  console.warn(
    'two-instances: skipped on the embedded database (PGlite serves one process; run with DATABASE_URL for this test)',
  );
const describeOnPostgres = embedded ? describe.skip : describe;

// REFRESH_REUSE_GRACE_SECONDS of both instances: long enough that 50 concurrent refreshes on a
// loaded 2-core machine land inside it, short enough to wait out twice.
const GRACE_SECONDS = 6;
const SCALE = 0.05; // discovery 5/min, authorize 3/min, token 6/min …

type TestApp = Awaited<ReturnType<typeof buildTestApp>>;
let setup: TestApp; // fixtures through the real services, on the same database
let a: ProviderProcess;
let b: ProviderProcess;
let dataDir: string;

describeOnPostgres('two instances, one database', () => {
  beforeAll(async () => {
    setup = await buildTestApp();
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'latchkey-two-'));
    const env = instanceEnv(process.env.TEST_DATABASE_URL!, dataDir, {
      RATE_LIMIT_SCALE: String(SCALE),
      REFRESH_REUSE_GRACE_SECONDS: String(GRACE_SECONDS),
    });
    [a, b] = await Promise.all([startProvider(env), startProvider(env)]);
  }, 90_000);
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await setup?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }, 30_000);

  const form = (body: Record<string, string>, headers: Record<string, string> = {}) => ({
    method: 'POST',
    redirect: 'manual' as const,
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(body).toString(),
  });
  const basic = (c: { id: string; secret: string | null }) => ({
    authorization: `Basic ${Buffer.from(`${c.id}:${encodeURIComponent(c.secret!)}`).toString('base64')}`,
  });

  it('counts rate limits jointly', async () => {
    const p = await buildPlatform(setup.services);
    const path = `/.well-known/openid-configuration?platform_guid=${p.id}`;
    const seen: Array<[string, number, string | null]> = [];
    for (const [name, inst] of [
      ['A', a],
      ['B', b],
      ['A', a],
      ['B', b],
      ['A', a],
      ['B', b],
      ['A', a],
    ] as const) {
      const res = await fetch(inst.url + path);
      seen.push([name, res.status, res.headers.get('x-ratelimit-remaining')]);
    }
    expect(seen).toEqual([
      ['A', 200, '4'],
      ['B', 200, '3'],
      ['A', 200, '2'],
      ['B', 200, '1'],
      ['A', 200, '0'],
      ['B', 429, '0'],
      ['A', 429, '0'],
    ]);
    const refused = await fetch(b.url + path);
    expect(await refused.json()).toEqual({
      error: 'too_many_requests',
      error_description: expect.stringMatching(/^Rate limit exceeded; retry in \d+ seconds$/),
    });
  });

  it('continues a browser session started on one instance on the other, and refuses a rotated refresh token on both after the grace window', async () => {
    const p = await buildPlatform(setup.services);
    const c = await buildClient(setup.services, p.id);
    const u = await buildUser(setup.services, p.id);
    let cookie = '';
    /** A browser that alternates between the instances, keeping the session cookie. */
    const go = async (inst: ProviderProcess, pathOrUrl: string, init: RequestInit = {}) => {
      const res = await fetch(inst.url + pathOrUrl, {
        redirect: 'manual',
        ...init,
        headers: { ...(init.headers as object), cookie },
      });
      const set = res.headers.get('set-cookie');
      if (set) cookie = set.split(';')[0];
      return { res, html: await res.text(), location: res.headers.get('location') ?? '' };
    };
    const csrf = (html: string) => /name="_csrf" value="([^"]+)"/.exec(html)![1];
    const query = new URLSearchParams({
      platform_guid: p.id,
      client_id: c.id,
      redirect_uri: c.redirectUris[0],
      response_type: 'code',
      scope: 'openid email offline_access',
      state: 'xyz',
    });

    const start = await go(a, `/oauth/authorize?${query}`); // A starts the flow
    expect(start.location).toMatch(/^\/interaction\//);
    const signin = await go(b, start.location); // B shows the sign-in page of A's interaction
    expect(signin.html).toMatch(/<h1[^>]*>\s*Sign in/);
    const signedIn = await go(
      a,
      `${start.location}/signin`,
      form({ _csrf: csrf(signin.html), email: u.email, password: TEST_PASSWORD }),
    );
    expect(signedIn.res.status).toBe(303);
    const consent = await go(b, signedIn.location); // the regenerated session is known to B
    expect(consent.html).toMatch(/wants to access your account/);
    const allowed = await go(a, `${start.location}/consent`, form({ _csrf: csrf(consent.html), decision: 'allow' }));
    const callback = new URL(allowed.location);
    expect(callback.searchParams.get('state')).toBe('xyz');
    expect(callback.searchParams.get('iss')).toBe('http://lb.test');

    const exchanged = await fetch(
      `${b.url}/oauth/token`,
      form(
        {
          platform_guid: p.id,
          grant_type: 'authorization_code',
          code: callback.searchParams.get('code')!,
          redirect_uri: c.redirectUris[0],
        },
        basic(c),
      ),
    );
    expect(exchanged.status).toBe(200);
    const first = await exchanged.json();
    // B also knows the signed-in account: a new authorization shows the chooser with it.
    const again = await go(b, `/oauth/authorize?${query}`);
    expect((await go(a, again.location)).html).toContain(u.email);

    // Rotated on A; within the window B may still answer it with the same successor; after it, B refuses it and revokes the family.
    const refresh = (inst: ProviderProcess, token: string) =>
      fetch(
        `${inst.url}/oauth/token`,
        form({ platform_guid: p.id, grant_type: 'refresh_token', refresh_token: token }, basic(c)),
      );
    const rotated = await refresh(a, first.refresh_token);
    expect(rotated.status).toBe(200);
    const second = await rotated.json();
    await new Promise((resolve) => setTimeout(resolve, GRACE_SECONDS * 1000 + 500));
    const reuse = await refresh(b, first.refresh_token);
    expect([reuse.status, (await reuse.json()).error]).toEqual([400, 'invalid_grant']);
    const successor = await refresh(a, second.refresh_token); // the revocation reached A too
    expect([successor.status, (await successor.json()).error]).toEqual([400, 'invalid_grant']);
  }, 30_000);

  it('lets 50 concurrent refreshes of one token across both instances all succeed within the window with ONE successor: one family, one live refresh token; a later reuse revokes it everywhere', async () => {
    const p = await buildPlatform(setup.services);
    await setup.services.platforms.setRateLimit(p.id, 'token', 100_000); // "higher limits by platform": 5 000/min at this scale
    const c = await buildClient(setup.services, p.id);
    const u = await buildUser(setup.services, p.id);
    const code = await buildCode(setup.services, {
      platformId: p.id,
      client: c,
      user: u,
      scopes: ['openid', 'offline_access'],
    });
    const tokenAt = (inst: ProviderProcess, body: Record<string, string>) =>
      fetch(`${inst.url}/oauth/token`, form({ platform_guid: p.id, ...body }, basic(c)));
    const issued = await (
      await tokenAt(a, { grant_type: 'authorization_code', code, redirect_uri: c.redirectUris[0] })
    ).json();

    const started = Date.now();
    const results = await Promise.all(
      Array.from({ length: 50 }, async (_, i) => {
        const res = await tokenAt(i % 2 ? b : a, { grant_type: 'refresh_token', refresh_token: issued.refresh_token });
        return { status: res.status, body: await res.json() };
      }),
    );
    const finished = Date.now();
    // Precondition, not a speed check: were the window over, it and not the code would decide.
    if (Date.now() - started >= GRACE_SECONDS * 1000)
      throw new Error('the 50 refreshes outlasted the grace window: raise GRACE_SECONDS');
    expect(results.map((r) => r.status)).toEqual(Array(50).fill(200));
    expect(new Set(results.map((r) => r.body.refresh_token)).size).toBe(1); // the same successor for every replay
    expect(new Set(results.map((r) => r.body.access_token)).size).toBe(50);

    const db = setup.database.db;
    const families = await db('refresh_token_families').where({ client_id: c.id });
    expect(families).toHaveLength(1);
    expect(families[0].revoked_at).toBeNull();
    expect(await db('refresh_tokens').where({ family_id: families[0].id }).count({ n: '*' }).first()).toEqual({ n: 2 });
    expect(
      await db('refresh_tokens').where({ family_id: families[0].id }).whereNull('rotated_at').count({ n: '*' }).first(),
    ).toEqual({ n: 1 });
    expect(
      await db('refresh_tokens')
        .where({ family_id: families[0].id })
        .whereNotNull('rotated_at')
        .count({ n: '*' })
        .first(),
    ).toEqual({ n: 1 });
    // Every access token, the code's and the 50 refreshes', lives by the one family (its jti names it).
    const jtis = [issued, ...results.map((r) => r.body)].map((b) => String(decodeJwt(b.access_token).jti));
    expect(jtis.filter((j) => j.startsWith(`g${families[0].id}.`))).toHaveLength(51);
    const survivor = results[7].body;
    const userinfo = (inst: ProviderProcess, at: string) =>
      fetch(`${inst.url}/oauth/userinfo?platform_guid=${p.id}`, { headers: { authorization: `Bearer ${at}` } });
    expect((await userinfo(a, survivor.access_token)).status).toBe(200); // A now knows this access token

    // After the window, presenting the original again revokes the whole family, on both instances.
    // The window opens when the rotation commits, which is before the last answer arrived, not
    // when the requests were sent: on a loaded machine that can be a second or more later.
    await new Promise((resolve) =>
      setTimeout(resolve, Math.max(0, GRACE_SECONDS * 1000 + 500 - (Date.now() - finished))),
    );
    const reuse = await tokenAt(b, { grant_type: 'refresh_token', refresh_token: issued.refresh_token });
    expect([reuse.status, (await reuse.json()).error]).toEqual([400, 'invalid_grant']);
    expect((await db('refresh_token_families').where({ id: families[0].id }).first()).revoked_at).not.toBeNull();
    const refused = await tokenAt(a, { grant_type: 'refresh_token', refresh_token: results[12].body.refresh_token });
    expect([refused.status, (await refused.json()).error]).toEqual([400, 'invalid_grant']);
    // A revoked access token is dead at once on the instance that had just accepted it.
    let status = 0;
    for (let i = 0; i < 20 && status !== 401; i++) {
      status = (await userinfo(a, survivor.access_token)).status;
      if (status !== 401) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(status).toBe(401);
  }, 30_000);
});
