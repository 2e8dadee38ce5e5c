import { buildTestApp } from '../helpers';
import { buildPlatform } from '../factories';
import { buildOperator, consoleBrowser, h1Of, signInConsole, type ConsoleBrowser } from './console-support';

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

const lastEvent = async (platformId: string, kind: Parameters<typeof t.services.audit.list>[0]['kind']) =>
  (await t.services.audit.list({ platformId, kind }, 1)).events[0];

describe('admin console screens', () => {
  it('Keys: rotate and retire, audited with the operator as actor; the active key cannot be retired (409 on the page)', async () => {
    const p = await buildPlatform(t.services);
    await b.get(`/admin/platforms/${p.id}/keys`);
    const res = await b.post(`/admin/platforms/${p.id}/keys/rotate`, {});
    expect({ status: res.status, location: res.headers.location }).toEqual({
      status: 303,
      location: `/admin/platforms/${p.id}/keys`,
    });
    const rotated = await lastEvent(p.id, 'key.rotated');
    expect(rotated).toMatchObject({ actorType: 'operator', actorName: email, platformId: p.id });
    const page = await b.get(`/admin/platforms/${p.id}/keys`);
    expect(page.text).toContain(`New active key ${rotated.details.kid}`);
    expect((page.text.match(/class="badge">retiring</g) ?? []).length).toBe(1);

    const active = await b.post(`/admin/platforms/${p.id}/keys/retire`, { kid: String(rotated.details.kid) });
    expect(active.status).toBe(409);
    expect(active.text).toContain('rotate first');
    for (const kid of ['00000000-0000-4000-8000-000000000000', 'nope'])
      expect((await b.post(`/admin/platforms/${p.id}/keys/retire`, { kid })).status).toBe(404);

    const retired = await b.post(`/admin/platforms/${p.id}/keys/retire`, { kid: String(rotated.details.previous_kid) });
    expect(retired.status).toBe(303);
    expect(await lastEvent(p.id, 'key.retired')).toMatchObject({
      actorType: 'operator',
      actorName: email,
      details: { kid: rotated.details.previous_kid },
    });
    expect((await b.follow(retired)).text).toMatch(/>retired</);
  });

  it('Platforms: a created platform is audited; a bad name is shown on the page (400), nothing created', async () => {
    await b.get('/admin/platforms');
    const bad = await b.post('/admin/platforms', { name: '   ' });
    expect(bad.status).toBe(400);
    expect(bad.text).toContain('Name: must not be empty');
    const ok = await b.post('/admin/platforms', { name: 'Console Made' });
    const platformId = ok.headers.location.split('/')[3];
    expect(await lastEvent(platformId, 'platform.created')).toMatchObject({ actorType: 'operator', actorName: email });
    expect(h1Of((await b.follow(ok)).text)).toBe('Console Made');
  });

  it('Rate limits: set and reset are audited; a bad value or endpoint is a 400 on the page', async () => {
    const p = await buildPlatform(t.services);
    await b.get(`/admin/platforms/${p.id}/rate-limits`);
    for (const [endpoint, value] of [
      ['token', '0'],
      ['token', 'ten'],
      ['token', ''],
      ['nothing', '5'],
    ]) {
      const res = await b.post(`/admin/platforms/${p.id}/rate-limits/${endpoint}`, {
        per_minute: value,
        action: 'set',
      });
      expect({ endpoint, value, status: res.status }).toEqual({ endpoint, value, status: 400 });
      expect(res.text).toContain('role="alert"');
    }
    expect(
      (await b.post(`/admin/platforms/${p.id}/rate-limits/token`, { per_minute: '77', action: 'set' })).status,
    ).toBe(303);
    expect((await lastEvent(p.id, 'rate_limit.changed')).details).toEqual({ endpoint: 'token', from: null, to: 77 });
    expect((await b.post(`/admin/platforms/${p.id}/rate-limits/token`, { action: 'reset' })).status).toBe(303);
    expect((await lastEvent(p.id, 'rate_limit.changed')).details).toEqual({ endpoint: 'token', from: 77, to: null });
    expect((await t.services.platforms.findPlatform(p.id))!.rateLimitOverrides).toEqual({});
  });

  it('Mail: an unknown mail id is refused on the page; "retry all dead" with none says so', async () => {
    const p = await buildPlatform(t.services);
    await b.get(`/admin/platforms/${p.id}/mail`);
    for (const id of ['00000000-0000-4000-8000-000000000000', "1' OR 1=1"]) {
      const res = await b.post(`/admin/platforms/${p.id}/mail/retry`, { id });
      expect(res.status).toBe(404); // shown on the mail page, with its error
      expect(res.text).toContain('unknown mail');
    }
    const none = await b.follow(await b.post(`/admin/platforms/${p.id}/mail/retry`, {}));
    expect(none.text).toContain('No dead mail to retry.');
    expect((await b.get(`/admin/platforms/${p.id}/mail?status=lost`)).status).toBe(200); // an unknown status filter shows everything
  });

  it('Audit log: bad filters are a 400 on the page naming the filter by its label, never a 5xx', async () => {
    const cases: Array<[string, string]> = [
      ['platform=nope', 'Platform: '],
      ['kind=made.up', 'unknown kind'],
      ['subject=abc', 'Subject (sub): '],
      ['since=yesterday', 'Since: '],
      ['until=2026-13-45', 'Until: '],
      ["before=1'", 'page link'],
    ];
    for (const [q, message] of cases) {
      const res = await b.get(`/admin/audit?${q}`);
      expect({ q, status: res.status }).toEqual({ q, status: 400 });
      expect({ q, alert: /role="alert"[^>]*><p>([^<]*)</.exec(res.text)?.[1] }).toEqual({
        q,
        alert: expect.stringContaining(message),
      });
    }
    const ok = await b.get(`/admin/audit?kind=operator.signed_in&since=2000-01-01&until=2999-12-31`);
    expect(ok.status).toBe(200);
    expect(ok.text).toContain(email);
  });
});
