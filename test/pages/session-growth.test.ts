// No unbounded session growth. Anonymous page views store no session row; an
// authorization in progress stores one small row that lives an hour; a sign-in extends it.
import request from 'supertest';
import { buildTestApp } from '../helpers';
import { buildClient, buildPlatform, buildUser, TEST_PASSWORD } from '../factories';
import { browser } from '../support/browser';
import { authorizeQuery } from '../support/account-flows';

let t: Awaited<ReturnType<typeof buildTestApp>>;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(() => t.close());

const HOUR = 3600_000;
const SECOND = 1000; // the row's expiry is rounded up to a whole second
const DAY = 24 * HOUR;

interface SessionRow {
  sid: string;
  text: string;
  expire: Date;
}

const sessionRows = async (): Promise<SessionRow[]> =>
  (await t.database.db('session').select('sid', t.database.db.raw('sess::text as text'), 'expire')).map(
    (r: SessionRow) => ({ ...r, expire: new Date(r.expire) }),
  );

/**
 * The rows stored since `before` that may be this test's: those naming its platform, and those
 * naming no platform at all (an empty or CSRF-only session). Other suites running at the same time
 * only store rows with their own platforms' accounts or interactions.
 */
async function rowsSince(before: Set<string>, platformId: string): Promise<SessionRow[]> {
  return (await sessionRows()).filter(
    (r) => !before.has(r.sid) && (r.text.includes(platformId) || !/"(accounts|interactions)"/.test(r.text)),
  );
}

/** The session id in a Set-Cookie of latchkey.sid (express-session signs it as s:<sid>.<mac>). */
const sidOf = (res: request.Response) => {
  const cookie = ([] as string[]).concat(res.headers['set-cookie'] ?? []).find((c) => c.startsWith('latchkey.sid='));
  return cookie
    ? decodeURIComponent(cookie.split(';')[0].slice('latchkey.sid='.length)).slice(2).split('.')[0]
    : undefined;
};
const cookieExpiry = (res: request.Response, name: string) => {
  const cookie = ([] as string[]).concat(res.headers['set-cookie'] ?? []).find((c) => c.startsWith(`${name}=`));
  const expires = cookie && /;\s*Expires=([^;]+)/i.exec(cookie)?.[1];
  return expires ? new Date(expires) : undefined;
};
const rowOf = async (sid: string) => (await sessionRows()).find((r) => r.sid === sid);

/** Runs the thunks with a few in flight at a time. */
async function inBatches(tasks: (() => Promise<unknown>)[], width = 10) {
  for (let i = 0; i < tasks.length; i += width) await Promise.all(tasks.slice(i, i + width).map((task) => task()));
}

// A thousand requests through the pages: what they store is the point, not how fast they go; on a
// busy two-core machine they take longer than jest's default 30 s.
const THOUSAND_REQUESTS_MS = 180_000;

const junk = (count: number, size: number) =>
  Object.fromEntries(Array.from({ length: count }, (_, i) => [`junk${i}`, 'x'.repeat(size)]));

it(
  '1,000 cookie-less requests over every hosted page store rows only for authorizations in progress, each small and short-lived',
  async () => {
    const p = await buildPlatform(t.services);
    const c = await buildClient(t.services, p.id, { postLogoutRedirectUris: ['https://app.example/bye'] });
    const u = await buildUser(t.services, p.id);
    // A real interaction (its row is made before the count starts), whose pages are then hit without its cookie.
    const live = await request(t.app).get(`/oauth/authorize?${authorizeQuery(p, c)}`);
    const iid = /^\/interaction\/([^/?]+)/.exec(live.headers.location)![1];
    const before = new Set((await sessionRows()).map((r) => r.sid));
    const q = `platform_guid=${p.id}`;
    const restart = authorizeQuery(p, c).toString();
    const unknownIid = '7d3c1f52-0d5e-4b7e-9a51-3f0b8c6f2a10';
    const statuses: Record<string, number[]> = {};

    const get = (path: string, cookie?: string) => () => {
      const req = request(t.app).get(path);
      return cookie ? req.set('Cookie', cookie) : req;
    };
    const post = (path: string, body: Record<string, string>) => () =>
      request(t.app).post(path).type('form').send(body);
    let interactionsStarted = 0;
    const kinds: Record<string, () => Promise<request.Response>> = {
      'account sign-in page': get(`/account/signin?${q}`),
      'account page': get(`/account?${q}`),
      'account chooser': get(`/account/choose?${q}`),
      'account signed out': get(`/account/signed-out?${q}`),
      'account sign-in page, forged session cookie': get(
        `/account/signin?${q}`,
        'latchkey.sid=s%3Aforged.c2lnbmF0dXJl',
      ),
      'forgot password': get(`/password/forgot?${q}`),
      'forgot password sent': get(`/password/forgot/sent?${q}`),
      'reset password, bad link': get(`/password/reset?${q}&token=nope`),
      'reset password done': get(`/password/reset/done?${q}`),
      'verify email, bad link': get(`/verify-email?${q}&token=nope`),
      logout: get(`/oauth/logout?${q}`),
      'logout with client and redirect': get(
        `/oauth/logout?${q}&client_id=${c.id}&post_logout_redirect_uri=${encodeURIComponent('https://app.example/bye')}&state=x`,
      ),
      'authorize with 12 KB of junk': async () => {
        const res = await request(t.app).get(
          `/oauth/authorize?${new URLSearchParams({ ...Object.fromEntries(authorizeQuery(p, c)), ...junk(24, 500) })}`,
        );
        if (res.status === 303 && res.headers.location.startsWith('/interaction/')) interactionsStarted++;
        return res;
      },
      'authorize POST with 30 KB of junk': post('/oauth/authorize', {
        ...Object.fromEntries(authorizeQuery(p, c)),
        ...junk(60, 500),
      }),
      'authorize, unknown client': get(
        `/oauth/authorize?${authorizeQuery(p, { ...c, id: unknownIid })}&${new URLSearchParams(junk(10, 500))}`,
      ),
      'authorize prompt=none': get(`/oauth/authorize?${authorizeQuery(p, c, { prompt: 'none' })}`),
      'interaction page of another browser': get(`/interaction/${iid}`),
      'interaction sign-in link': get(`/interaction/${iid}/signin`),
      'interaction forgot link': get(`/interaction/${iid}/forgot`),
      'unknown interaction': get(`/interaction/${unknownIid}`),
      'sign-in POST without session': post(`/interaction/${iid}/signin`, { email: u.email, password: TEST_PASSWORD }),
      'consent POST with restart': post(`/interaction/${iid}/consent`, { decision: 'allow', restart }),
      'account sign-in POST': post(`/account/signin?${q}`, { email: u.email, password: TEST_PASSWORD }),
      'forgot password POST': post(`/password/forgot?${q}`, { email: u.email }),
      'logout confirm POST': post(`/oauth/logout/confirm?${q}`, { decision: 'logout' }),
    };
    const names = Object.keys(kinds);
    expect(names).toHaveLength(25);
    const tasks = Array.from({ length: 1000 }, (_, i) => async () => {
      const name = names[i % names.length];
      const res = await kinds[name]();
      (statuses[name] ??= []).push(res.status);
    });
    const started = Date.now();
    await inBatches(tasks);

    // Every page answered (no 5xx), and the authorizations really started.
    for (const [name, codes] of Object.entries(statuses))
      expect([name, codes.filter((s) => s >= 500)]).toEqual([name, []]);
    expect(interactionsStarted).toBe(40);
    expect(new Set(statuses['authorize POST with 30 KB of junk'])).toEqual(new Set([303]));

    const rows = await rowsSince(before, p.id);
    // Only the 40 authorizations in progress hold a row: no page view, form or redirect stores one.
    expect(rows.length).toBeLessThanOrEqual(interactionsStarted);
    expect(rows.filter((r) => !r.text.includes('"interactions"'))).toEqual([]);
    for (const row of rows) {
      // Small: the junk parameters are not kept (restart holds the known parameters only).
      expect(row.text.length).toBeLessThan(2048);
      expect(row.text).not.toContain('junk');
      // Short-lived: an hour, not SESSION_TTL_SECONDS.
      expect(row.expire.getTime()).toBeLessThanOrEqual(Date.now() + HOUR + SECOND);
      expect(row.expire.getTime()).toBeGreaterThan(started);
    }
    expect(rows.reduce((sum, r) => sum + r.text.length, 0)).toBeLessThan(40 * 2048);
  },
  THOUSAND_REQUESTS_MS,
);

it('anonymous forms work without a session: a double-submit CSRF cookie instead of a row', async () => {
  const p = await buildPlatform(t.services);
  const u = await buildUser(t.services, p.id);
  const b = browser(t.app);
  const page = await b.agent.get(`/password/forgot?platform_guid=${p.id}`);
  expect(page.status).toBe(200);
  expect(sidOf(page)).toBeUndefined();
  expect(String(page.headers['set-cookie'])).toMatch(
    /^latchkey\.csrf=[\w-]{43}; Max-Age=\d+; Path=\/; Expires=[^;]+; HttpOnly; SameSite=Lax$/,
  );
  const token = /name="_csrf" value="([^"]+)"/.exec(page.text)![1];

  // The token belongs to this browser's cookie: another browser's cookie, or none, is refused.
  const other = request.agent(t.app);
  await other.get(`/password/forgot?platform_guid=${p.id}`);
  expect(
    (await other.post(`/password/forgot?platform_guid=${p.id}`).type('form').send({ _csrf: token, email: u.email }))
      .status,
  ).toBe(403);
  expect(
    (
      await request(t.app)
        .post(`/password/forgot?platform_guid=${p.id}`)
        .type('form')
        .send({ _csrf: token, email: u.email })
    ).status,
  ).toBe(403);
  expect(
    (
      await b.agent
        .post(`/password/forgot?platform_guid=${p.id}`)
        .type('form')
        .send({ _csrf: 'x'.repeat(43), email: u.email })
    ).status,
  ).toBe(403);

  const sent = await b.agent
    .post(`/password/forgot?platform_guid=${p.id}`)
    .type('form')
    .send({ _csrf: token, email: u.email });
  expect(sent.status).toBe(303);
  expect(sent.headers.location).toBe(`/password/forgot/sent?platform_guid=${p.id}`);
  expect(sidOf(sent)).toBeUndefined();
});

it('an authorization in progress lives an hour (cookie and row); signing in extends it to SESSION_TTL_SECONDS', async () => {
  const p = await buildPlatform(t.services);
  const c = await buildClient(t.services, p.id);
  const u = await buildUser(t.services, p.id);
  const b = browser(t.app);
  const start = await b.agent.get(`/oauth/authorize?${authorizeQuery(p, c)}`);
  const sid = sidOf(start)!;
  expect(cookieExpiry(start, 'latchkey.sid')!.getTime()).toBeLessThanOrEqual(Date.now() + HOUR);
  expect((await rowOf(sid))!.expire.getTime()).toBeLessThanOrEqual(Date.now() + HOUR + SECOND);

  await b.get(start.headers.location);
  const csrf = /name="_csrf" value="([^"]+)"/.exec(b.html)![1];
  const signedIn = await b.agent
    .post(`${start.headers.location}/signin`)
    .type('form')
    .send({ _csrf: csrf, email: u.email, password: TEST_PASSWORD });
  expect(signedIn.status).toBe(303);
  const newSid = sidOf(signedIn)!;
  expect(newSid).not.toBe(sid); // regenerated at sign-in
  expect(await rowOf(sid)).toBeUndefined();
  const ttl = t.config.sessionTtlSeconds * 1000;
  expect(cookieExpiry(signedIn, 'latchkey.sid')!.getTime()).toBeGreaterThan(Date.now() + ttl - 60_000);
  expect((await rowOf(newSid))!.expire.getTime()).toBeGreaterThan(Date.now() + ttl - 60_000);
  expect(ttl).toBeGreaterThan(DAY);
});

it("the account page's own sign-in starts the session only when the password is right, with the full lifetime", async () => {
  const p = await buildPlatform(t.services);
  const u = await buildUser(t.services, p.id);
  const b = browser(t.app);
  const page = await b.agent.get(`/account/signin?platform_guid=${p.id}`);
  expect(sidOf(page)).toBeUndefined();
  const csrf = /name="_csrf" value="([^"]+)"/.exec(page.text)![1];
  const wrong = await b.agent
    .post(`/account/signin?platform_guid=${p.id}`)
    .type('form')
    .send({ _csrf: csrf, email: u.email, password: 'not the password' });
  expect(wrong.status).toBe(400);
  expect(sidOf(wrong)).toBeUndefined();
  const right = await b.agent
    .post(`/account/signin?platform_guid=${p.id}`)
    .type('form')
    .send({ _csrf: csrf, email: u.email, password: TEST_PASSWORD });
  expect(right.status).toBe(303);
  const sid = sidOf(right)!;
  expect((await rowOf(sid))!.expire.getTime()).toBeGreaterThan(Date.now() + t.config.sessionTtlSeconds * 1000 - 60_000);
  const account = await b.get(right.headers.location);
  expect(account.res.status).toBe(200);
  expect(b.html).toContain(u.email);
});

it('viewing the pages of a stored authorization writes nothing: the row keeps its version and expiry', async () => {
  const p = await buildPlatform(t.services);
  const c = await buildClient(t.services, p.id);
  const b = browser(t.app);
  const start = await b.agent.get(`/oauth/authorize?${authorizeQuery(p, c)}`);
  const sid = sidOf(start)!;
  // xmin is the transaction that wrote the row's current version: any save or touch changes it.
  const version = async () =>
    (await t.database.db('session').where({ sid }).select(t.database.db.raw('xmin::text as xmin'), 'expire'))[0];
  const stored = await version();
  expect(stored).toBeDefined();
  for (let i = 0; i < 3; i++) {
    const page = await b.agent.get(start.headers.location);
    expect(page.status).toBe(200);
    expect(page.text).toMatch(/name="_csrf" value="[\w-]{32}"/); // the session's form token, minted with the interaction
    expect(sidOf(page)).toBeUndefined(); // no new cookie either
  }
  expect(await version()).toEqual(stored);
});

it('a sign-in writes its session once: authorize stores it, the page view writes nothing, the sign-in replaces it with one write', async () => {
  const db = t.database.db;
  // Every row write to the session table, as the database saw it.
  await db.raw(`CREATE TABLE IF NOT EXISTS session_writes (sid text, op text)`);
  await db.raw(`CREATE OR REPLACE FUNCTION session_writes_count() RETURNS trigger AS $$
    BEGIN INSERT INTO session_writes VALUES (COALESCE(NEW.sid, OLD.sid), TG_OP); RETURN NULL; END $$ LANGUAGE plpgsql`);
  await db.raw(
    `CREATE OR REPLACE TRIGGER session_writes AFTER INSERT OR UPDATE OR DELETE ON session FOR EACH ROW EXECUTE FUNCTION session_writes_count()`,
  );
  const writesOf = async (sid: string) =>
    (await db('session_writes').where({ sid }).select('op')).map((r: { op: string }) => r.op);
  try {
    const p = await buildPlatform(t.services);
    const c = await buildClient(t.services, p.id);
    const u = await buildUser(t.services, p.id);
    await t.services.authorize.grantConsent(
      { platformId: p.id, clientId: c.id, scopes: authorizeQuery(p, c).get('scope')!.split(' ') } as never,
      u.id,
    );
    const b = browser(t.app);
    const start = await b.agent.get(`/oauth/authorize?${authorizeQuery(p, c)}`);
    const sid = sidOf(start)!;
    const page = await b.agent.get(start.headers.location);
    const csrf = /name="_csrf" value="([^"]+)"/.exec(page.text)![1];
    expect(await writesOf(sid)).toEqual(['INSERT']);
    const signedIn = await b.agent
      .post(`${start.headers.location}/signin`)
      .type('form')
      .send({ _csrf: csrf, email: u.email, password: TEST_PASSWORD });
    expect(signedIn.status).toBe(303);
    expect(signedIn.headers.location).toMatch(/^https:\/\/app\.example\/callback\?code=/); // straight to the app: consent was given
    const newSid = sidOf(signedIn)!;
    expect(await writesOf(sid)).toEqual(['INSERT', 'DELETE']); // regenerated at sign-in
    expect(await writesOf(newSid)).toEqual(['INSERT']); // written once, before the redirect
    expect((await rowOf(newSid))!.text).toContain(u.id);
  } finally {
    await db.raw('DROP TRIGGER IF EXISTS session_writes ON session');
  }
});
