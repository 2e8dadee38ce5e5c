import { buildTestApp } from '../helpers';
import { cliActor } from '../../src/domain/admin';
import { registrationTokenId } from '../../src/domain/registration-token';
import { buildPlatform, buildStandardPlatform } from '../factories';
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

const lastEvent = async (platformId: string, kind: 'registration_token.created' | 'registration_token.revoked') =>
  (await t.services.audit.list({ platformId, kind }, 1)).events[0];
const unescape = (html: string) => html.replace(/&#34;/g, '"').replace(/&#39;/g, "'").replace(/&amp;/g, '&');
const shownToken = (html: string) => /id="registration-token">([^<]+)</.exec(html)?.[1];

describe('admin console: registration tokens', () => {
  it('is a tab of the platform; makes a token shown once, lists it and revokes it after a confirmation; all audited as the operator', async () => {
    const p = await buildStandardPlatform(t.services);
    await t.services.admin.platforms.update(cliActor(), p.id, { registration: 'token' });
    const list = `/admin/platforms/${p.id}/registration-tokens`;
    const keys = await b.get(`/admin/platforms/${p.id}/keys`);
    expect(keys.text).toContain(`<a href="${list}">Registration tokens</a>`);
    expect(keys.text).toContain(`<a class="link" href="${list}">Registration tokens</a> screen`);
    const empty = await b.get(list);
    expect(empty.status).toBe(200);
    expect(empty.text).toContain('No registration token yet.');
    expect(empty.text).not.toContain('id="registration-tokens-policy"');

    const made = await b.post(list, { max_uses: '5', expires_in: '86400' });
    expect({ status: made.status, location: made.headers.location }).toEqual({ status: 303, location: list });
    const page = await b.follow(made);
    const token = shownToken(page.text)!;
    const id = registrationTokenId(token)!;
    expect(id).toBeDefined();
    expect(unescape(page.text)).toContain('it is shown this once');
    expect(page.text).toContain(`Registration token ${id} made.`);
    const [stored] = (await t.services.admin.registrationTokens.list(cliActor(), p.id, { limit: 10 })).items;
    expect(stored).toMatchObject({ id, maxUses: 5, uses: 0, status: 'active', createdBy: email });
    expect(stored.expiresAt!.getTime() - stored.createdAt.getTime()).toBe(86_400_000);
    expect(await lastEvent(p.id, 'registration_token.created')).toMatchObject({
      actorType: 'operator',
      actorName: email,
      details: { id, max_uses: 5 },
    });

    const reloaded = await b.get(list);
    expect(shownToken(reloaded.text)).toBeUndefined();
    expect(reloaded.text).not.toContain(token);
    expect(reloaded.text).toContain(`<code>${id}</code>`);
    expect(reloaded.text).toContain('0 / 5');
    expect(reloaded.text).toContain(email);
    expect(reloaded.text).toMatch(/badge-ok">active</);

    const unconfirmed = await b.post(`${list}/${id}/revoke`, {});
    expect(unconfirmed.status).toBe(400);
    expect(unescape(unconfirmed.text)).toContain('tick "I understand" to revoke the token');
    expect((await t.services.admin.registrationTokens.list(cliActor(), p.id, { limit: 10 })).items[0].status).toBe(
      'active',
    );
    expect((await b.post(`${list}/00000000-0000-4000-8000-000000000000/revoke`, { confirm: 'yes' })).status).toBe(404);

    const revoked = await b.post(`${list}/${id}/revoke`, { confirm: 'yes' });
    expect(revoked.status).toBe(303);
    const after = await b.follow(revoked);
    expect(after.text).toContain(`Registration token ${id} revoked`);
    expect(after.text).toMatch(/badge-bad">revoked</);
    expect(after.text).not.toContain(`${list}/${id}/revoke`);
    expect(await lastEvent(p.id, 'registration_token.revoked')).toMatchObject({
      actorType: 'operator',
      actorName: email,
      details: { id, uses: 0 },
    });
  });

  it('an unlimited token that never expires; a bad number is shown on the form by its label (400), nothing made', async () => {
    const p = await buildStandardPlatform(t.services);
    const list = `/admin/platforms/${p.id}/registration-tokens`;
    const page = await b.get(list);
    expect(page.text).toContain('id="registration-tokens-policy"'); // registration is off
    for (const [form, message] of [
      [{ max_uses: '0', expires_in: '' }, 'Maximum uses: must be at least 1'],
      [{ max_uses: 'five', expires_in: '' }, 'Maximum uses: a whole number, or empty for unlimited'],
      [{ max_uses: '', expires_in: '30' }, 'Expires in: must be at least 60 seconds'],
    ] as const) {
      const res = await b.post(list, form);
      expect({ message, status: res.status }).toEqual({ message, status: 400 });
      expect(res.text).toContain(message);
    }
    expect((await t.services.admin.registrationTokens.list(cliActor(), p.id, { limit: 10 })).items).toEqual([]);

    const made = await b.follow(await b.post(list, { max_uses: '', expires_in: '' }));
    expect(shownToken(made.text)).toBeDefined();
    expect(made.text).toContain('0 / unlimited');
    const [stored] = (await t.services.admin.registrationTokens.list(cliActor(), p.id, { limit: 10 })).items;
    expect(stored).toMatchObject({ maxUses: null, expiresAt: null });
  });

  it('refuses a form without its CSRF token (403): nothing made, nothing revoked', async () => {
    const p = await buildStandardPlatform(t.services);
    const list = `/admin/platforms/${p.id}/registration-tokens`;
    const { registrationToken } = await t.services.admin.registrationTokens.create(cliActor(), p.id, {});
    await b.get(list);
    expect((await b.post(list, { max_uses: '1' }, false)).status).toBe(403);
    expect((await b.post(`${list}/${registrationToken.id}/revoke`, { confirm: 'yes' }, false)).status).toBe(403);
    const items = (await t.services.admin.registrationTokens.list(cliActor(), p.id, { limit: 10 })).items;
    expect(items.map((i) => [i.id, i.status])).toEqual([[registrationToken.id, 'active']]);
  });

  it('on a seed platform, explains that there is no registration there and offers no form', async () => {
    const seed = await buildPlatform(t.services);
    const page = await b.get(`/admin/platforms/${seed.id}/registration-tokens`);
    expect(page.status).toBe(200);
    expect(page.text).toContain('id="registration-tokens-seed"');
    expect(page.text).toContain('it has no registration endpoint');
    expect(page.text).not.toContain('Make token');
    const res = await b.post(`/admin/platforms/${seed.id}/registration-tokens`, {});
    expect(res.status).toBe(409);
    expect(res.text).toContain('registration tokens belong to standard platforms');
  });
});
