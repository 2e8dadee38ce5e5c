import { randomUUID } from 'node:crypto';
import { buildTestApp } from '../helpers';
import { buildClient, buildPlatform, buildUser } from '../factories';
import { browser } from '../support/browser';
import { signInThrough } from '../support/account-flows';
import { ownDatabase } from '../mail/own-database';
import { cliActor } from '../../src/domain/admin';
import { createOutboundFetch } from '../../src/net/outbound-fetch';
import { createBackchannelLogout } from '../../src/services/backchannel-logout.service';
import { startBackchannelLogoutJob, type BackchannelLogoutJob } from '../../src/jobs/backchannel-logout.job';
import { registerBackchannel, secretKey, startLogoutRp, verifyLogoutToken, type LogoutRp } from './backchannel-rp';

// Logout tokens are "sent durably through the same outbox mechanism as
// mail" — retried with backoff, kept across restarts, failed for good when they cannot succeed.
// A database of its own: every worker takes any due delivery, so this queue is not shared.
let own: Awaited<ReturnType<typeof ownDatabase>>;
let t: Awaited<ReturnType<typeof buildTestApp>>;
let rp: LogoutRp;
const jobs: BackchannelLogoutJob[] = [];

beforeAll(async () => {
  own = await ownDatabase();
  t = await buildTestApp({ DATABASE_URL: own.url });
  rp = await startLogoutRp();
});
afterEach(async () => {
  await Promise.all(jobs.splice(0).map((j) => j.stop()));
});
afterAll(async () => {
  await t?.close();
  await rp?.close();
  await own?.drop();
});

/** Retries due at once: each deliverDue call below is the next attempt. */
const NOW = { retryBaseSeconds: 0, retryMaxSeconds: 0, batchSize: 100 };
const rows = (clientId: string) => t.services.backchannelLogout.listForClient(clientId);

/** A user signed in to a registered app in a browser, then signed out on the account page: one delivery queued. */
async function signedOut() {
  const p = await buildPlatform(t.services);
  const c = await buildClient(t.services, p.id);
  const uri = await registerBackchannel(t.services, rp, c);
  const u = await buildUser(t.services, p.id);
  const b = browser(t.app);
  await signInThrough(b, p, c, u.email);
  await b.get(`/account?platform_guid=${p.id}`);
  await b.submit(`/account/signout?platform_guid=${p.id}`, { account: u.id });
  expect(await rows(c.id)).toEqual([expect.objectContaining({ status: 'pending', attempts: 0 })]);
  return { p, c, u, uri };
}

async function until<T>(
  what: string,
  probe: () => Promise<T | undefined | false> | T | undefined | false,
  timeoutMs = 15_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('back-channel logout delivery', () => {
  it('retries an RP that answered 500, with a fresh token, and stops once it answers 200', async () => {
    const { c, uri } = await signedOut();
    rp.answerWith(500);
    expect(await t.services.backchannelLogout.deliverDue(NOW)).toMatchObject({ claimed: 1, retrying: 1 });
    expect(await rows(c.id)).toEqual([
      expect.objectContaining({ status: 'pending', attempts: 1, lastError: 'HTTP 500', deliveredAt: null }),
    ]);

    expect(await t.services.backchannelLogout.deliverDue(NOW)).toMatchObject({ claimed: 1, delivered: 1 });
    expect(await rows(c.id)).toEqual([
      expect.objectContaining({ status: 'delivered', attempts: 2, lastError: null, deliveredAt: expect.any(Date) }),
    ]);
    const [first, second] = rp.to(uri);
    expect(rp.to(uri)).toHaveLength(2);
    const check = { issuer: 'http://issuer.test', audience: c.id, algorithms: ['HS512'] };
    const a = await verifyLogoutToken(first.logoutToken, secretKey(c.secret!), check);
    const b = await verifyLogoutToken(second.logoutToken, secretKey(c.secret!), check);
    expect(b.claims.jti).not.toBe(a.claims.jti); // built at each attempt
    expect(b.claims.sid).toBe(a.claims.sid);
    expect(await t.services.backchannelLogout.deliverDue(NOW)).toMatchObject({ claimed: 0 });
  });

  it('waits out the backoff: a failed delivery is not due again at once', async () => {
    const { c, uri } = await signedOut();
    rp.answerWith(503);
    expect(await t.services.backchannelLogout.deliverDue({ batchSize: 100 })).toMatchObject({ retrying: 1 }); // default policy: 15 to 30 s
    expect(await t.services.backchannelLogout.deliverDue({ batchSize: 100 })).toMatchObject({ claimed: 0 });
    const [row] = await rows(c.id);
    const waitSeconds = (row.nextAttemptAt.getTime() - Date.now()) / 1000;
    expect(waitSeconds).toBeGreaterThan(10);
    expect(waitSeconds).toBeLessThanOrEqual(31);
    expect(rp.to(uri)).toHaveLength(1);
  });

  it('gives up after the last attempt: failed, with the last status, never sent again', async () => {
    const { c, uri } = await signedOut();
    rp.answerWith(502, 502, 502);
    for (const outcome of ['retrying', 'retrying', 'failed']) {
      expect(await t.services.backchannelLogout.deliverDue({ ...NOW, maxAttempts: 3 })).toMatchObject({
        claimed: 1,
        [outcome]: 1,
      });
    }
    expect(await rows(c.id)).toEqual([
      expect.objectContaining({ status: 'failed', attempts: 3, lastError: 'HTTP 502' }),
    ]);
    expect(await t.services.backchannelLogout.deliverDue({ ...NOW, maxAttempts: 3 })).toMatchObject({ claimed: 0 });
    expect(rp.to(uri)).toHaveLength(3);
  });

  it('is durable: written with the sign-out while no worker runs, delivered later by another instance', async () => {
    const { c, uri } = await signedOut();
    expect(rp.to(uri)).toHaveLength(0);
    const later = await buildTestApp({ DATABASE_URL: own.url }); // a restarted provider
    try {
      expect(await later.services.backchannelLogout.deliverDue(NOW)).toMatchObject({ delivered: 1 });
    } finally {
      await later.close();
    }
    expect(rp.to(uri)).toHaveLength(1);
    expect(await rows(c.id)).toEqual([expect.objectContaining({ status: 'delivered' })]);
  });

  it('the worker sends what is due when it starts, and is woken by a sign-out it did not wait for', async () => {
    const queued = await signedOut();
    const job = startBackchannelLogoutJob(t.services, t.services.deps.logger, { pollIntervalMs: 600_000 }); // no polling within this test
    jobs.push(job);
    await until('the queued delivery', () => rp.to(queued.uri).length === 1);

    const p = await buildPlatform(t.services);
    const c = await buildClient(t.services, p.id);
    const uri = await registerBackchannel(t.services, rp, c);
    const u = await buildUser(t.services, p.id);
    await signInThrough(browser(t.app), p, c, u.email);
    await t.services.admin.users.signOut(cliActor(), p.id, u.id); // committed → the worker wakes
    await until('the woken delivery', () => rp.to(uri).length === 1);
    await until('the row marked delivered', async () => (await rows(c.id))[0]?.status === 'delivered');
  });

  it('fails at once, without sending, a target the outbound guard refuses (production: no private addresses)', async () => {
    const { c, uri } = await signedOut();
    const guarded = createBackchannelLogout(
      t.services.deps,
      t.services.platforms,
      t.services.tokenSigner,
      createOutboundFetch({ allowPrivateTargets: false }),
    );
    expect(await guarded.deliverDue(NOW)).toMatchObject({ claimed: 1, failed: 1 });
    const [row] = await rows(c.id);
    expect(row).toMatchObject({ status: 'failed', attempts: 1 });
    expect(row.lastError).toMatch(/^refused: 127\.0\.0\.1/);
    expect(rp.to(uri)).toHaveLength(0);
  });

  it('fails at once the delivery of an app deleted, or unregistered, since the sign-out', async () => {
    const deleted = await signedOut();
    await t.services.admin.clients.delete(cliActor(), deleted.p.id, deleted.c.id);
    const unregistered = await signedOut();
    await t.database.db('clients').where({ id: unregistered.c.id }).update({ backchannel_logout_uri: null });
    expect(await t.services.backchannelLogout.deliverDue(NOW)).toMatchObject({ claimed: 2, failed: 2 });
    expect(await rows(deleted.c.id)).toEqual([
      expect.objectContaining({ status: 'failed', attempts: 1, lastError: 'the application was deleted' }),
    ]);
    expect(await rows(unregistered.c.id)).toEqual([
      expect.objectContaining({
        status: 'failed',
        lastError: 'the application no longer has a backchannel_logout_uri',
      }),
    ]);
    expect(rp.to(deleted.uri).length + rp.to(unregistered.uri).length).toBe(0);
  });

  it('never stores or logs the logout token', async () => {
    const { c, uri } = await signedOut();
    const lines: string[] = [];
    const logger = t.services.deps.logger;
    const spy = (level: 'info' | 'warn') =>
      jest
        .spyOn(logger, level)
        .mockImplementation(
          ((obj: unknown, msg?: string) => void lines.push(JSON.stringify(obj) + (msg ?? ''))) as never,
        );
    const spies = [spy('info'), spy('warn')];
    try {
      rp.answerWith(500);
      await t.services.backchannelLogout.deliverDue(NOW);
      await t.services.backchannelLogout.deliverDue(NOW);
    } finally {
      spies.forEach((s) => s.mockRestore());
    }
    const tokens = rp.to(uri).map((r) => r.logoutToken);
    expect(tokens).toHaveLength(2);
    expect(lines.length).toBeGreaterThanOrEqual(2);
    const stored = JSON.stringify(await t.database.db('backchannel_logouts').where({ client_id: c.id }));
    for (const token of tokens) {
      for (const part of token.split('.')) {
        expect(lines.join('\n')).not.toContain(part);
        expect(stored).not.toContain(part);
      }
    }
  });
});

describe('purge', () => {
  it('removes delivered and failed deliveries and sign-in session rows older than SESSION_TTL_SECONDS; keeps pending and recent ones', async () => {
    const p = await buildPlatform(t.services);
    const c = await buildClient(t.services, p.id);
    const u = await buildUser(t.services, p.id);
    const old = new Date(Date.now() - (t.config.sessionTtlSeconds + 3600) * 1000);
    const row = (status: string, createdAt: Date) => ({
      id: randomUUID(),
      platform_id: p.id,
      client_id: c.id,
      user_id: u.id,
      sid: 'sid',
      status,
      created_at: createdAt,
    });
    const rowsIn = [row('delivered', old), row('failed', old), row('pending', old), row('delivered', new Date())];
    await t.database.db('backchannel_logouts').insert(rowsIn);
    const session = (browser: string, createdAt: Date) => ({
      platform_id: p.id,
      user_id: u.id,
      browser_session_id: browser,
      client_id: c.id,
      sid: browser,
      created_at: createdAt,
    });
    await t.database.db('session_clients').insert([session(`old-${p.id}`, old), session(`new-${p.id}`, new Date())]);

    const removed = await t.services.maintenance.purgeExpired();
    expect(removed.backchannelLogouts).toBeGreaterThanOrEqual(2);
    expect(removed.sessionClients).toBeGreaterThanOrEqual(1);
    const left = await t.database
      .db('backchannel_logouts')
      .whereIn(
        'id',
        rowsIn.map((r) => r.id),
      )
      .select('status');
    expect(left.map((r: { status: string }) => r.status).sort()).toEqual(['delivered', 'pending']);
    const sessionsLeft = await t.database.db('session_clients').where({ user_id: u.id }).select('browser_session_id');
    expect(sessionsLeft).toEqual([{ browser_session_id: `new-${p.id}` }]);
  });
});
