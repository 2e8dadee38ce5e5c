import { buildTestApp } from '../helpers';
import { cliActor } from '../../src/domain/admin';
import { buildClient, buildPlatform, buildUser } from '../factories';
import { browser } from '../support/browser';
import { exchange, signInThrough } from '../support/account-flows';
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

const lastEvent = async (platformId: string, kind: Parameters<typeof t.services.audit.list>[0]['kind']) =>
  (await t.services.audit.list({ platformId, kind }, 1)).events[0];
const secretOn = (html: string) => /id="client-secret">([^<]+)</.exec(html)?.[1];
const byOperator = () => ({ actorType: 'operator', actorName: email });
/** A form POST as a browser sends it: a repeated field (checkboxes) as repeated keys. */
const postForm = (path: string, fields: Record<string, string | string[]>) => {
  const body = new URLSearchParams({ _csrf: /name="_csrf" value="([^"]+)"/.exec(b.html)![1] });
  for (const [k, v] of Object.entries(fields)) for (const one of [v].flat()) body.append(k, one);
  return b.agent.post(path).type('form').send(body.toString());
};

describe('admin console: clients', () => {
  it('creates a confidential client (the secret shown once, never on a reload), edits it, rotates the secret, deletes it; all audited', async () => {
    const p = await buildPlatform(t.services);
    const list = `/admin/platforms/${p.id}/clients`;
    expect((await b.get(`/admin/platforms/${p.id}`)).headers.location).toBe(list); // a platform opens on its first tab
    await b.get(list);
    const created = await postForm(list, {
      name: 'Billing',
      type: 'confidential',
      redirect_uris: 'https://billing.example/cb\r\n\r\n https://billing.example/cb2 ',
      post_logout_redirect_uris: '',
      scopes: ['openid', 'email'],
    });
    expect(created.status).toBe(303);
    const clientId = created.headers.location.split('/').pop()!;
    const event = await lastEvent(p.id, 'client.created');
    expect(event).toMatchObject({
      ...byOperator(),
      clientId,
      details: {
        name: 'Billing',
        redirect_uris: ['https://billing.example/cb', 'https://billing.example/cb2'],
        scopes: 'openid email',
      },
    });
    const page = await b.follow(created);
    const secret = secretOn(page.text)!;
    expect(secret).toMatch(/^\S{32,}$/);
    expect(JSON.stringify(event.details)).not.toContain(secret);
    const stored = await t.services.admin.clients.get(cliActor(), p.id, clientId);
    expect(t.services.platforms.clientSecret(stored)).toBe(secret);
    const reload = await b.get(created.headers.location);
    expect(reload.status).toBe(200);
    expect(secretOn(reload.text)).toBeUndefined();
    expect(reload.text).not.toContain(secret);
    expect((await b.get(list)).text).toContain('https://billing.example/cb2');

    const edited = await postForm(`${list}/${clientId}`, {
      name: 'Billing v2',
      redirect_uris: 'https://billing.example/new',
      post_logout_redirect_uris: 'https://billing.example/bye',
      scopes: ['openid', 'profile'],
      is_resource_server: 'yes',
    });
    expect(edited.status).toBe(303);
    expect((await lastEvent(p.id, 'client.updated')).details).toMatchObject({
      name: { from: 'Billing', to: 'Billing v2' },
      redirect_uris: { to: ['https://billing.example/new'] },
      scopes: { from: 'openid email', to: 'openid profile' },
      is_resource_server: { from: false, to: true },
    });
    expect((await b.follow(edited)).text).toContain('Changes saved.');

    const rotated = await b.post(`${list}/${clientId}/rotate-secret`, { overlap_seconds: '3600' });
    expect(rotated.status).toBe(303);
    expect(await lastEvent(p.id, 'client.secret_rotated')).toMatchObject({
      ...byOperator(),
      details: { overlap_seconds: 3600 },
    });
    const newSecret = secretOn((await b.follow(rotated)).text)!;
    expect(newSecret).toBeDefined();
    expect(newSecret).not.toBe(secret);
    expect(secretOn((await b.get(`${list}/${clientId}`)).text)).toBeUndefined();

    const unconfirmed = await b.post(`${list}/${clientId}/delete`, {});
    expect(unconfirmed.status).toBe(400);
    expect(unconfirmed.text).toContain('tick &#34;I understand&#34; to delete the client');
    const deleted = await b.post(`${list}/${clientId}/delete`, { confirm: 'yes' });
    expect({ status: deleted.status, location: deleted.headers.location }).toEqual({ status: 303, location: list });
    expect(await lastEvent(p.id, 'client.deleted')).toMatchObject({ ...byOperator(), clientId });
    expect((await b.get(`${list}/${clientId}`)).status).toBe(404);
  });

  it('bad input re-renders the form with the API message and a 400; nothing is created or changed', async () => {
    const p = await buildPlatform(t.services);
    const list = `/admin/platforms/${p.id}/clients`;
    await b.get(list);
    const cases: Array<[Record<string, string>, string]> = [
      [
        { name: '', type: 'public', redirect_uris: 'https://a.example/cb', scopes: 'openid' },
        'Name: must not be empty',
      ],
      [
        { name: 'A', type: 'robot', redirect_uris: 'https://a.example/cb', scopes: 'openid' },
        'Type: client type must be',
      ],
      [
        { name: 'A', type: 'public', redirect_uris: '', scopes: 'openid' },
        'Redirect URIs: at least one redirect URI is required',
      ],
      [
        { name: 'A', type: 'public', redirect_uris: 'https://a.example/cb', scopes: 'email' },
        'scopes must include openid',
      ],
      [
        {
          name: 'A',
          type: 'public',
          redirect_uris: 'https://a.example/cb',
          scopes: 'openid',
          is_resource_server: 'yes',
        },
        'a resource server must be a confidential client',
      ],
    ];
    for (const [fields, message] of cases) {
      const res = await b.post(list, fields);
      expect({ fields, status: res.status }).toEqual({ fields, status: 400 });
      expect(res.text.replace(/&#34;/g, '"')).toContain(message);
      expect(res.text).toContain(`value="${fields.name}"`); // the form as typed
    }
    expect((await t.services.admin.clients.list(cliActor(), p.id, { limit: 10 })).items).toEqual([]);

    const c = await buildClient(t.services, p.id);
    await b.get(`${list}/${c.id}`);
    const overlap = await b.post(`${list}/${c.id}/rotate-secret`, { overlap_seconds: '-5' });
    expect(overlap.status).toBe(400);
    expect(overlap.text).toContain('Previous secret keeps working: must be at least 0');
    const noScope = await b.post(`${list}/${c.id}`, { name: 'X', redirect_uris: 'https://app.example/callback' });
    expect(noScope.status).toBe(400);
    expect(noScope.text).toContain('scopes must include openid');
    const pub = await buildClient(t.services, p.id, { type: 'public' });
    await b.get(`${list}/${pub.id}`);
    expect((await b.post(`${list}/${pub.id}/rotate-secret`, {})).text).toContain(
      'a public client has no secret to rotate',
    );
    expect(await lastEvent(p.id, 'client.updated')).toBeUndefined();
  });

  it('a POST without the CSRF token is refused (403), nothing created', async () => {
    const p = await buildPlatform(t.services);
    await b.get(`/admin/platforms/${p.id}/clients`);
    const res = await b.post(
      `/admin/platforms/${p.id}/clients`,
      { name: 'A', type: 'public', redirect_uris: 'https://a.example/cb', scopes: 'openid' },
      false,
    );
    expect(res.status).toBe(403);
    expect(await lastEvent(p.id, 'client.created')).toBeUndefined();
  });
});

describe('admin console: users', () => {
  it('searches by part of the email with paging links; a user page shows claims, sessions, consents and the trail', async () => {
    const p = await buildPlatform(t.services);
    const c = await buildClient(t.services, p.id, { name: 'Shop' });
    const u = await buildUser(t.services, p.id, { email: 'grace.hopper@navy.example', phoneNumber: '+14155550123' });
    await buildUser(t.services, p.id, { email: 'ada@lovelace.example' });
    await exchange(t.app, p, c, await signInThrough(browser(t.app), p, c, u.email));
    const users = `/admin/platforms/${p.id}/users`;
    const found = await b.get(`${users}?email=NAVY`);
    expect(found.status).toBe(200);
    expect(found.text).toContain('grace.hopper@navy.example');
    expect(found.text).not.toContain('ada@lovelace.example');
    expect((await b.get(`${users}?email=nobody`)).text).toContain('No user whose email contains');
    expect((await b.get(`${users}?cursor=garbage`)).status).toBe(400);

    const page = await b.get(`${users}/${u.id}`);
    expect(page.status).toBe(200);
    for (const text of [
      'grace.hopper@navy.example',
      '+14155550123',
      'Shop',
      'openid',
      'sign_in.succeeded',
      'no authenticator app',
    ])
      expect(page.text).toContain(text);
    expect(page.text).toContain(`/admin/audit?platform=${p.id}&amp;subject=${u.id}`);
  });

  it('each action changes state and is audited with the operator as actor; 303 back with a message', async () => {
    const p = await buildPlatform(t.services);
    const c = await buildClient(t.services, p.id, { name: 'Shop' });
    const u = await buildUser(t.services, p.id);
    await exchange(t.app, p, c, await signInThrough(browser(t.app), p, c, u.email));
    const page = `/admin/platforms/${p.id}/users/${u.id}`;
    const act = async (path: string, fields: Record<string, string> = {}) => {
      await b.get(page);
      const res = await b.post(`${page}${path}`, fields);
      expect({ path, status: res.status }).toEqual({ path, status: 303 });
      return res;
    };
    const sessions = () => t.services.admin.users.sessions(cliActor(), p.id, u.id);

    const session = (await sessions())[0];
    expect(session).toBeDefined();
    await act(`/sessions/${session.id}/revoke`);
    expect(await sessions()).toEqual([]);
    expect(await lastEvent(p.id, 'user.session_revoked')).toMatchObject({ ...byOperator(), subject: u.id });

    await act(`/consents/${c.id}/revoke`);
    expect(await lastEvent(p.id, 'user.consent_revoked')).toMatchObject({
      ...byOperator(),
      subject: u.id,
      clientId: c.id,
    });
    expect((await b.get(page)).text).toContain('No app holds this user');

    const disabled = await act('/disable');
    expect(disabled.headers.location).toBe(page);
    expect((await b.follow(disabled)).text).toContain('User disabled');
    expect((await t.services.admin.users.get(cliActor(), p.id, u.id)).user.disabledAt).not.toBeNull();
    expect(await lastEvent(p.id, 'user.disabled')).toMatchObject({ ...byOperator(), subject: u.id });
    await act('/enable');
    expect((await t.services.admin.users.get(cliActor(), p.id, u.id)).user.disabledAt).toBeNull();
    expect(await lastEvent(p.id, 'user.enabled')).toMatchObject(byOperator());

    expect((await b.follow(await act('/unlock'))).text).toContain('Nothing to unlock');
    expect(await lastEvent(p.id, 'user.unlocked')).toMatchObject(byOperator());
    await act('/sign-out');
    expect(await lastEvent(p.id, 'user.signed_out')).toMatchObject(byOperator());
    expect((await b.follow(await act('/password-reset'))).text).toContain('A password reset mail is queued');
    expect(await lastEvent(p.id, 'user.password_reset_sent')).toMatchObject({
      ...byOperator(),
      details: { email: u.email },
    });
    await act('/mfa-reset');
    expect(await lastEvent(p.id, 'user.mfa_reset')).toMatchObject(byOperator());

    await b.get(page);
    const unconfirmed = await b.post(`${page}/delete`, {});
    expect(unconfirmed.status).toBe(400);
    expect(unconfirmed.text).toContain('to delete the user');
    const deleted = await act('/delete', { confirm: 'yes' });
    expect(deleted.headers.location).toBe(`/admin/platforms/${p.id}/users`);
    expect(await lastEvent(p.id, 'user.deleted')).toMatchObject({ ...byOperator(), subject: u.id });
    expect((await b.get(page)).status).toBe(404);
  });

  it('unknown ids are 404 pages, never a 5xx; a missing CSRF token is a 403 and changes nothing', async () => {
    const p = await buildPlatform(t.services);
    const u = await buildUser(t.services, p.id);
    const users = `/admin/platforms/${p.id}/users`;
    for (const path of [
      `${users}/nope`,
      `${users}/00000000-0000-4000-8000-000000000000`,
      `/admin/platforms/${p.id}/clients/nope`,
    ])
      expect({ path, status: (await b.get(path)).status }).toEqual({ path, status: 404 });
    await b.get(`${users}/${u.id}`);
    for (const path of [
      `${users}/nope/disable`,
      `${users}/${u.id}/sessions/nope/revoke`,
      `${users}/${u.id}/sessions/00000000-0000-4000-8000-000000000000/revoke`,
      `${users}/${u.id}/consents/x/revoke`,
      `${users}/${u.id}/fly`,
    ]) {
      await b.get(`${users}/${u.id}`);
      expect({ path, status: (await b.post(path, {})).status }).toEqual({ path, status: 404 });
    }
    await b.get(`${users}/${u.id}`);
    expect((await b.post(`${users}/${u.id}/disable`, {}, false)).status).toBe(403);
    expect(await lastEvent(p.id, 'user.disabled')).toBeUndefined();
  });

  it("a platform operator sees only its platform: another platform's clients and users are 404 pages", async () => {
    const mine = await buildPlatform(t.services);
    const other = await buildPlatform(t.services);
    const theirClient = await buildClient(t.services, other.id);
    const theirUser = await buildUser(t.services, other.id);
    const scoped = consoleBrowser(t.app);
    await signInConsole(scoped, (await buildOperator(t.services, { platformId: mine.id })).email, () => new Date());
    expect((await scoped.get(`/admin/platforms/${mine.id}/clients`)).status).toBe(200);
    expect((await scoped.get(`/admin/platforms/${mine.id}/users`)).status).toBe(200);
    for (const path of [
      `/admin/platforms/${other.id}/clients`,
      `/admin/platforms/${other.id}/clients/${theirClient.id}`,
      `/admin/platforms/${other.id}/users`,
      `/admin/platforms/${other.id}/users/${theirUser.id}`,
      `/admin/platforms/${mine.id}/clients/${theirClient.id}`,
      `/admin/platforms/${mine.id}/users/${theirUser.id}`,
    ]) {
      expect({ path, status: (await scoped.get(path)).status }).toEqual({ path, status: 404 });
    }
    await scoped.get(`/admin/platforms/${mine.id}/users`);
    expect((await scoped.post(`/admin/platforms/${other.id}/users/${theirUser.id}/disable`, {})).status).toBe(404);
    expect((await scoped.post(`/admin/platforms/${mine.id}/users/${theirUser.id}/disable`, {})).status).toBe(404);
    expect(
      (await scoped.post(`/admin/platforms/${other.id}/clients/${theirClient.id}/delete`, { confirm: 'yes' })).status,
    ).toBe(404);
    expect(await lastEvent(other.id, 'user.disabled')).toBeUndefined();
    expect(await lastEvent(other.id, 'client.deleted')).toBeUndefined();
  });
});
