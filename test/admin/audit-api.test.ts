import { randomUUID } from 'node:crypto';
import { buildTestApp, expectOAuthError } from '../helpers';
import { buildPlatform } from '../factories';
import { runCommand } from '../../src/cli/commands';
import type { AuditEventInput } from '../../src/domain/audit';
import { adminClient, adminToken } from './admin-api-client';

type Event = {
  id: string;
  kind: string;
  platform_guid: string | null;
  subject: string | null;
  client_id: string | null;
  actor_type: string;
  occurred_at: string;
};

describe('admin API: audit events', () => {
  let t: Awaited<ReturnType<typeof buildTestApp>>;
  let global: ReturnType<typeof adminClient>;
  beforeAll(async () => {
    t = await buildTestApp();
    global = adminClient(t.app, await adminToken(t.services));
  });
  afterAll(() => t.close());

  /** An event as the flows record them (the audit service itself, in its own statement). */
  const record = (e: AuditEventInput, actorType: 'user' | 'system' = 'user') =>
    t.services.audit.record(t.database.db, { actorType, requestId: 'req-test' }, e);

  /** Every event of a list, following next_cursor. */
  async function all(client: ReturnType<typeof adminClient>, path: string, limit = 2): Promise<Event[]> {
    const out: Event[] = [];
    let cursor: string | null = null;
    do {
      const sep = path.includes('?') ? '&' : '?';
      const page = await client.get(`${path}${sep}limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`);
      expect(page.status).toBe(200);
      expect(page.body.items.length).toBeLessThanOrEqual(limit);
      out.push(...page.body.items);
      cursor = page.body.next_cursor;
    } while (cursor);
    return out;
  }

  it("lists a platform's events newest first with cursor paging and filters", async () => {
    const p = await buildPlatform(t.services);
    const sub = randomUUID();
    const [clientA, clientB] = [randomUUID(), randomUUID()];
    await record({
      kind: 'sign_in.failed',
      platformId: p.id,
      subject: sub,
      clientId: clientA,
      details: { reason: 'wrong_password' },
    });
    await record({ kind: 'sign_in.succeeded', platformId: p.id, subject: sub, clientId: clientA });
    await record({ kind: 'consent.granted', platformId: p.id, subject: randomUUID(), clientId: clientB });
    expect((await global.post(`/platforms/${p.id}/keys/rotate`)).status).toBe(201);

    const events = await all(global, `/platforms/${p.id}/audit-events`);
    expect(events.map((e) => e.kind)).toEqual([
      'key.rotated',
      'consent.granted',
      'sign_in.succeeded',
      'sign_in.failed',
    ]);
    expect(events.map((e) => Number(e.id))).toEqual([...events.map((e) => Number(e.id))].sort((a, b) => b - a));
    expect(events[3]).toEqual({
      id: expect.any(String),
      occurred_at: expect.any(String),
      kind: 'sign_in.failed',
      actor_type: 'user',
      actor_id: null,
      actor_name: null,
      platform_guid: p.id,
      subject: sub,
      client_id: clientA,
      source: null,
      user_agent: null,
      request_id: 'req-test',
      details: { reason: 'wrong_password' },
    });
    expect(events[0]).toMatchObject({ kind: 'key.rotated', actor_type: 'admin_token', actor_name: 'test token' });

    const kinds = (query: string) =>
      all(global, `/platforms/${p.id}/audit-events?${query}`).then((list) => list.map((e) => e.kind));
    expect(await kinds('kind=sign_in.failed')).toEqual(['sign_in.failed']);
    expect(await kinds(`subject=${sub}`)).toEqual(['sign_in.succeeded', 'sign_in.failed']);
    expect(await kinds(`client_id=${clientB}`)).toEqual(['consent.granted']);
    expect(await kinds('actor_type=admin_token')).toEqual(['key.rotated']);
    expect(await kinds(`subject=${sub}&kind=sign_in.succeeded`)).toEqual(['sign_in.succeeded']);

    // since is inclusive, until exclusive: the window at the second event's time holds that event.
    const at = events[2].occurred_at;
    const sinceAt = await all(global, `/platforms/${p.id}/audit-events?since=${encodeURIComponent(at)}`);
    expect(sinceAt.map((e) => e.kind)).toContain('sign_in.succeeded');
    expect(sinceAt.every((e) => Date.parse(e.occurred_at) >= Date.parse(at))).toBe(true);
    const untilAt = await all(global, `/platforms/${p.id}/audit-events?until=${encodeURIComponent(at)}`);
    expect(untilAt.every((e) => Date.parse(e.occurred_at) < Date.parse(at))).toBe(true);
    expect(untilAt.map((e) => e.kind)).not.toContain('sign_in.succeeded');
    expect(await kinds('since=2000-01-01T00:00:00Z&until=2000-01-02T00:00:00%2B02:00')).toEqual([]);
  });

  it('a global token reads every event, also those of no platform, and may filter by platform', async () => {
    const a = await buildPlatform(t.services);
    const b = await buildPlatform(t.services);
    const tag = randomUUID();
    await record({ kind: 'sign_up', platformId: a.id, subject: tag });
    await record({ kind: 'sign_up', platformId: b.id, subject: tag });
    await record({ kind: 'master_key.resealed', subject: tag }, 'system');

    const everywhere = await all(global, `/audit-events?subject=${tag}`);
    expect(everywhere.map((e) => e.platform_guid)).toEqual([null, b.id, a.id]);
    expect(
      (await all(global, `/audit-events?subject=${tag}&platform_guid=${b.id}`)).map((e) => e.platform_guid),
    ).toEqual([b.id]);
    expect((await all(global, `/audit-events?subject=${tag}&actor_type=system`)).map((e) => e.kind)).toEqual([
      'master_key.resealed',
    ]);
  });

  it("a platform token sees its platform's events only: never another platform's, nor those of no platform", async () => {
    const mine = await buildPlatform(t.services);
    const theirs = await buildPlatform(t.services);
    const tag = randomUUID();
    await record({ kind: 'logout', platformId: mine.id, subject: tag });
    await record({ kind: 'logout', platformId: theirs.id, subject: tag });
    await record({ kind: 'operator.created', subject: tag }, 'system');
    const scoped = adminClient(t.app, await adminToken(t.services, mine.id));

    const seen = await all(scoped, `/platforms/${mine.id}/audit-events`, 200);
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.every((e) => e.platform_guid === mine.id)).toBe(true);
    expect(seen.filter((e) => e.subject === tag).map((e) => e.kind)).toEqual(['logout']);
    expectOAuthError(await scoped.get(`/platforms/${theirs.id}/audit-events`), 404, 'not_found');
    expectOAuthError(await scoped.get(`/audit-events?subject=${tag}`), 403, 'access_denied');
    expectOAuthError(await scoped.get(`/audit-events?platform_guid=${mine.id}`), 403, 'access_denied');
  });

  it('refuses bad filters with a 400 naming the field', async () => {
    const p = await buildPlatform(t.services);
    const path = `/platforms/${p.id}/audit-events`;
    const cases: Array<[string, RegExp]> = [
      ['kind=sign_in.maybe', /^kind: /],
      ['actor_type=robot', /^actor_type: /],
      ['since=yesterday', /^since: must be an ISO 8601 date-time/],
      ['until=2026-11-24', /^until: must be an ISO 8601 date-time/],
      ['since=2026-11-24T10:00:00Z&until=2026-11-24T09:00:00Z', /^since: must be before until/],
      ['limit=0', /^limit: /],
      ['limit=201', /^limit: /],
      ['cursor=garbage', /^cursor is not one this server gave out/],
      [`cursor=${Buffer.from('audit:1 OR 1=1').toString('base64url')}`, /^cursor is not one/],
      ['subject=someone', /^subject: must be a UUID/],
      ['client_id=web-app', /^client_id: must be a UUID/],
      ['colour=red', /colour/],
    ];
    for (const [query, message] of cases) {
      const res = await global.get(`${path}?${query}`);
      expectOAuthError(res, 400, 'invalid_request');
      expect([query, res.body.error_description]).toEqual([query, expect.stringMatching(message)]);
    }
    expectOAuthError(await global.get('/audit-events?platform_guid=nope'), 400, 'invalid_request');
    expectOAuthError(
      await global.get('/platforms/00000000-0000-4000-8000-000000000000/audit-events'),
      404,
      'not_found',
    );
  });

  it('admin audit list: filters and paging as the API', async () => {
    const p = await buildPlatform(t.services);
    const [tag, client] = [randomUUID(), randomUUID()];
    await record({ kind: 'sign_in.failed', platformId: p.id, subject: tag, clientId: client });
    await record({ kind: 'sign_in.succeeded', platformId: p.id, subject: tag, clientId: client });
    const first = (await runCommand(t.services, [
      'audit',
      'list',
      '--platform',
      p.id,
      '--subject',
      tag,
      '--limit',
      '1',
    ])) as { items: Event[]; next_cursor: string };
    expect(first.items.map((e) => e.kind)).toEqual(['sign_in.succeeded']);
    const rest = await runCommand(t.services, [
      'audit',
      'list',
      '--platform',
      p.id,
      '--subject',
      tag,
      '--cursor',
      first.next_cursor,
    ]);
    expect(rest).toEqual({
      items: [expect.objectContaining({ kind: 'sign_in.failed', client_id: client })],
      next_cursor: null,
    });
    const filtered = (await runCommand(t.services, [
      'audit',
      'list',
      '--kind',
      'sign_in.failed',
      '--client',
      client,
      '--subject',
      tag,
      '--since',
      '2000-01-01T00:00:00Z',
    ])) as { items: Event[] };
    expect(filtered.items.map((e) => [e.kind, e.platform_guid])).toEqual([['sign_in.failed', p.id]]);
    await expect(runCommand(t.services, ['audit', 'list', '--since', 'yesterday'])).rejects.toThrow(
      /since: must be an ISO 8601 date-time/,
    );
    await expect(runCommand(t.services, ['audit', 'list', '--platform', 'nope'])).rejects.toThrow(
      /platform_guid: must be a UUID/,
    );
    await expect(runCommand(t.services, ['audit', 'list', '--kind', 'nope'])).rejects.toThrow(/kind: /);
  });
});
