import { buildTestApp, expectOAuthError } from '../helpers';
import { buildPlatform, buildUser } from '../factories';
import { runCommand } from '../../src/cli/commands';
import { adminClient, adminToken } from './admin-api-client';

describe('admin API: sign-in throttles and the mail outbox', () => {
  let t: Awaited<ReturnType<typeof buildTestApp>>;
  let global: ReturnType<typeof adminClient>;
  beforeAll(async () => {
    t = await buildTestApp();
    global = adminClient(t.app, await adminToken(t.services));
  });
  afterAll(() => t.close());

  /** Five wrong passwords from one source: the account+source key locks, the source key counts. */
  async function lockedOut(platformId: string, source: string) {
    const u = await buildUser(t.services, platformId);
    for (let i = 0; i < 5; i++) await t.services.throttle.attemptSignIn(platformId, u.email, `wrong ${i}`, source);
    return u;
  }

  // Each mail a second apart, so "newest first" is one order (not a tie broken by id).
  const firstMailAt = Date.now();
  let mails = 0;

  /**
   * A mail of the platform in `status`, written through the outbox and moved to that status in the
   * same transaction, so that no worker (of this or another test file) claims it first.
   */
  async function mailIn(platformId: string, status: 'dead' | 'sent', subject = 'Reset your password') {
    return t.database.db.transaction(async (trx) => {
      const id = await t.services.mailOutbox.enqueue(trx, {
        platformId,
        kind: 'reset_password',
        to: { address: 'someone@example.com', name: 'Someone' },
        fromName: 'Acme',
        subject,
        text: 'secret link https://issuer.test/password/reset?token=abc',
        html: '<p>secret link</p>',
      });
      const createdAt = new Date(firstMailAt + 1000 * mails++);
      await trx('mail_outbox')
        .where({ id })
        .update(
          status === 'dead'
            ? { status: 'dead', attempts: 5, last_error: 'ECONNREFUSED', created_at: createdAt }
            : { status: 'sent', attempts: 1, sealed_body: null, sent_at: new Date(), created_at: createdAt },
        );
      return id;
    });
  }

  describe('throttles', () => {
    it('lists the keys in force with filters, emails only hashed', async () => {
      const p = await buildPlatform(t.services);
      const u = await lockedOut(p.id, '203.0.113.5');
      const all = await global.get(`/platforms/${p.id}/throttles`);
      expect(all.status).toBe(200);
      expect(all.body.throttles.map((x: { kind: string }) => x.kind).sort()).toEqual([
        'sign_in_account',
        'sign_in_source',
      ]);
      expect(JSON.stringify(all.body)).not.toContain(u.email);
      const locked = await global.get(`/platforms/${p.id}/throttles?locked=true`);
      expect(locked.body.throttles).toEqual([
        {
          kind: 'sign_in_account',
          platform_guid: p.id,
          email_sha256: expect.any(String),
          source: '203.0.113.5',
          failures: 0,
          locks: 1,
          locked_until: expect.any(String),
          locked_seconds: expect.any(Number),
        },
      ]);
      // A one-minute lock, read a moment after it began (seconds left, counted on the real clock).
      expect(locked.body.throttles[0].locked_seconds).toBeGreaterThan(45);
      expect(locked.body.throttles[0].locked_seconds).toBeLessThanOrEqual(60);
      expect(
        (await global.get(`/platforms/${p.id}/throttles?email=${encodeURIComponent(u.email.toUpperCase())}`)).body
          .throttles,
      ).toHaveLength(1);
      expect((await global.get(`/platforms/${p.id}/throttles?email=nobody@example.com`)).body.throttles).toEqual([]);
      expect((await global.get(`/platforms/${p.id}/throttles?source=203.0.113.5`)).body.throttles).toHaveLength(2);
    });

    it('clears by email, by source or all; audited throttle.cleared; the account signs in again', async () => {
      const p = await buildPlatform(t.services);
      const u = await lockedOut(p.id, '203.0.113.6');
      await lockedOut(p.id, '203.0.113.7');
      const byEmail = await global.delete(
        `/platforms/${p.id}/throttles?email=${encodeURIComponent(u.email.toUpperCase())}`,
      );
      expect(byEmail.body).toEqual({ platform_guid: p.id, cleared: 1 });
      expect(
        (await t.services.throttle.attemptSignIn(p.id, u.email, 'correct horse battery staple', '203.0.113.6')).ok,
      ).toBe(true);
      expect((await global.delete(`/platforms/${p.id}/throttles?source=203.0.113.7`)).body).toEqual({
        platform_guid: p.id,
        cleared: 2,
      });
      expect((await global.delete(`/platforms/${p.id}/throttles?all=true`)).body).toEqual({
        platform_guid: p.id,
        cleared: 1,
      });
      expect((await global.delete(`/platforms/${p.id}/throttles?all=true`)).body).toEqual({
        platform_guid: p.id,
        cleared: 0,
      });
      expect((await global.get(`/platforms/${p.id}/throttles`)).body.throttles).toEqual([]);

      const { events } = await t.services.audit.list({ platformId: p.id, kind: 'throttle.cleared' }, 10);
      expect(events.map((e) => e.details)).toEqual([
        { all: true, cleared: 1, kinds: ['sign_in_source'] },
        { source: '203.0.113.7', cleared: 2, kinds: expect.arrayContaining(['sign_in_account', 'sign_in_source']) },
        { email: u.email.toLowerCase(), cleared: 1, kinds: ['sign_in_account'] },
      ]);
      expect(events[2]).toMatchObject({ actorType: 'admin_token', requestId: byEmail.headers['x-request-id'] });
    });

    it("refuses bad input naming the field, and another platform's throttles are unknown to a platform token", async () => {
      const p = await buildPlatform(t.services);
      const other = await buildPlatform(t.services);
      await lockedOut(other.id, '203.0.113.8');
      const none = await global.delete(`/platforms/${p.id}/throttles`);
      expectOAuthError(none, 400, 'invalid_request');
      expect(none.body.error_description).toMatch(/give email, source or all=true/);
      expectOAuthError(
        await global.delete(`/platforms/${p.id}/throttles?all=true&email=a@example.com`),
        400,
        'invalid_request',
      );
      const locked = await global.get(`/platforms/${p.id}/throttles?locked=maybe`);
      expectOAuthError(locked, 400, 'invalid_request');
      expect(locked.body.error_description).toMatch(/^locked: /);
      expectOAuthError(await global.get(`/platforms/${p.id}/throttles?colour=red`), 400, 'invalid_request');
      expectOAuthError(await global.get('/platforms/00000000-0000-4000-8000-000000000000/throttles'), 404, 'not_found');

      const scoped = adminClient(t.app, await adminToken(t.services, p.id));
      expect((await scoped.get(`/platforms/${p.id}/throttles`)).body).toEqual({ throttles: [] });
      expectOAuthError(await scoped.get(`/platforms/${other.id}/throttles`), 404, 'not_found');
      expectOAuthError(await scoped.delete(`/platforms/${other.id}/throttles?all=true`), 404, 'not_found');
      expect((await global.get(`/platforms/${other.id}/throttles`)).body.throttles).toHaveLength(2);
    });

    it('admin throttle clear goes through the admin service: audited as the CLI', async () => {
      const p = await buildPlatform(t.services);
      await lockedOut(p.id, '203.0.113.9');
      expect(await runCommand(t.services, ['throttle', 'clear', '--platform', p.id, '--all'])).toEqual({
        platform_guid: p.id,
        cleared: 2,
      });
      const { events } = await t.services.audit.list({ platformId: p.id, kind: 'throttle.cleared' }, 10);
      expect(events).toEqual([
        expect.objectContaining({ actorType: 'cli', details: { all: true, cleared: 2, kinds: expect.any(Array) } }),
      ]);
      await expect(
        runCommand(t.services, ['throttle', 'list', '--platform', '00000000-0000-4000-8000-000000000000']),
      ).rejects.toThrow(/unknown platform/);
    });
  });

  describe('mail outbox', () => {
    it("lists a platform's mails newest first with counts and a cursor, never a body", async () => {
      const p = await buildPlatform(t.services);
      const ids = [
        await mailIn(p.id, 'dead', 'one'),
        await mailIn(p.id, 'sent', 'two'),
        await mailIn(p.id, 'dead', 'three'),
      ];
      const page = await global.get(`/platforms/${p.id}/mail`);
      expect(page.status).toBe(200);
      expect(page.body.counts).toEqual({ queued: 0, sending: 0, sent: 1, dead: 2 });
      expect(page.body.items.map((m: { subject: string }) => m.subject)).toEqual(['three', 'two', 'one']);
      expect(page.body.items[0]).toEqual({
        id: ids[2],
        platform_guid: p.id,
        kind: 'reset_password',
        to: 'someone@example.com',
        subject: 'three',
        status: 'dead',
        attempts: 5,
        next_attempt_at: null,
        last_error: 'ECONNREFUSED',
        created_at: expect.any(String),
        sent_at: null,
      });
      expect(JSON.stringify(page.body)).not.toMatch(/secret link|sealed|token=/);

      const dead = await global.get(`/platforms/${p.id}/mail?status=dead`);
      expect(dead.body.items.map((m: { id: string }) => m.id)).toEqual([ids[2], ids[0]]);
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const next = await global.get(`/platforms/${p.id}/mail?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
        seen.push(...next.body.items.map((m: { id: string }) => m.id));
        cursor = next.body.next_cursor;
      } while (cursor);
      expect(seen).toEqual([ids[2], ids[1], ids[0]]);
    });

    it('retries one dead mail or every dead one, audited mail.retried; a sent mail is a conflict', async () => {
      const p = await buildPlatform(t.services);
      const [dead, sent, dead2, dead3] = [
        await mailIn(p.id, 'dead'),
        await mailIn(p.id, 'sent'),
        await mailIn(p.id, 'dead'),
        await mailIn(p.id, 'dead'),
      ];
      const one = await global.post(`/platforms/${p.id}/mail/${dead}/retry`);
      expect(one.status).toBe(200);
      expect(one.body).toEqual({
        requeued: 1,
        mails: [expect.objectContaining({ id: dead, status: 'queued', attempts: 0 })],
      });
      const conflict = await global.post(`/platforms/${p.id}/mail/${sent}/retry`);
      expectOAuthError(conflict, 409, 'invalid_request');
      expect(conflict.body.error_description).toMatch(/is sent: only a dead or queued mail can be retried/);

      const all = await global.post(`/platforms/${p.id}/mail/retry-dead`);
      expect(all.body.requeued).toBe(2);
      expect(all.body.mails.map((m: { id: string }) => m.id).sort()).toEqual([dead2, dead3].sort());
      expect((await global.post(`/platforms/${p.id}/mail/retry-dead`)).body).toEqual({ requeued: 0, mails: [] });

      const { events } = await t.services.audit.list({ platformId: p.id, kind: 'mail.retried' }, 10);
      expect(events.map((e) => e.details)).toEqual([
        { requeued: 2, all_dead: true, mail_ids: expect.arrayContaining([dead2, dead3]) },
        { requeued: 1, mail_ids: [dead] },
      ]);
      expect(events[1]).toMatchObject({ actorType: 'admin_token', requestId: one.headers['x-request-id'] });
    });

    it('keeps platforms apart: a platform token sees and retries its own mail only; GET /mail is global', async () => {
      const mine = await buildPlatform(t.services);
      const theirs = await buildPlatform(t.services);
      const myMail = await mailIn(mine.id, 'dead');
      const theirMail = await mailIn(theirs.id, 'dead');
      const scoped = adminClient(t.app, await adminToken(t.services, mine.id));

      expect((await scoped.get(`/platforms/${mine.id}/mail`)).body.items.map((m: { id: string }) => m.id)).toEqual([
        myMail,
      ]);
      expectOAuthError(await scoped.get(`/platforms/${theirs.id}/mail`), 404, 'not_found');
      expectOAuthError(await scoped.post(`/platforms/${theirs.id}/mail/${theirMail}/retry`), 404, 'not_found');
      expectOAuthError(await scoped.post(`/platforms/${theirs.id}/mail/retry-dead`), 404, 'not_found');
      // Their mail under my platform's path is as unknown as a missing one.
      expectOAuthError(await scoped.post(`/platforms/${mine.id}/mail/${theirMail}/retry`), 404, 'not_found');
      expectOAuthError(await scoped.get('/mail'), 403, 'access_denied');
      expect((await t.database.db('mail_outbox').where({ id: theirMail }).first()).status).toBe('dead');

      const everything = await global.get(`/mail?platform_guid=${theirs.id}`);
      expect(everything.body.items.map((m: { id: string }) => m.id)).toEqual([theirMail]);
      expect(everything.body.counts.dead).toBe(1);
      const newest = await global.get('/mail?status=dead&limit=200');
      expect(newest.body.items.map((m: { id: string }) => m.id)).toEqual(expect.arrayContaining([myMail, theirMail]));
    });

    it('refuses bad input naming the field; unknown mail is 404', async () => {
      const p = await buildPlatform(t.services);
      const status = await global.get(`/platforms/${p.id}/mail?status=lost`);
      expectOAuthError(status, 400, 'invalid_request');
      expect(status.body.error_description).toMatch(/^status: /);
      expectOAuthError(await global.get(`/platforms/${p.id}/mail?limit=201`), 400, 'invalid_request');
      expectOAuthError(await global.get(`/platforms/${p.id}/mail?cursor=garbage`), 400, 'invalid_request');
      expectOAuthError(await global.get('/mail?platform_guid=nope'), 400, 'invalid_request');
      const id = await global.post(`/platforms/${p.id}/mail/not-an-id/retry`);
      expectOAuthError(id, 400, 'invalid_request');
      expect(id.body.error_description).toMatch(/^mail_id: must be a UUID/);
      expectOAuthError(
        await global.post(`/platforms/${p.id}/mail/00000000-0000-4000-8000-000000000000/retry`),
        404,
        'not_found',
      );
    });

    it('admin mail list and retry go through the admin service: audited as the CLI', async () => {
      const p = await buildPlatform(t.services);
      const dead = await mailIn(p.id, 'dead');
      const listed = await runCommand(t.services, ['mail', 'list', '--platform', p.id, '--status', 'dead']);
      expect(listed).toEqual({
        counts: expect.objectContaining({ dead: 1 }),
        mails: [expect.objectContaining({ id: dead, status: 'dead' })],
        next_cursor: null,
      });
      expect(await runCommand(t.services, ['mail', 'retry', '--id', dead])).toEqual({
        requeued: 1,
        mails: [expect.objectContaining({ id: dead, status: 'queued' })],
      });
      const { events } = await t.services.audit.list({ platformId: p.id, kind: 'mail.retried' }, 10);
      expect(events).toEqual([
        expect.objectContaining({ actorType: 'cli', details: { requeued: 1, mail_ids: [dead] } }),
      ]);
    });
  });
});
