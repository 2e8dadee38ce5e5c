import { buildTestApp } from '../helpers';
import { cliActor } from '../../src/domain/admin';
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

const lastEvent = async (platformId: string, kind: 'resource.created' | 'resource.updated' | 'resource.deleted') =>
  (await t.services.audit.list({ platformId, kind }, 1)).events[0];
const unescape = (html: string) => html.replace(/&#34;/g, '"').replace(/&#39;/g, "'").replace(/&amp;/g, '&');
const FORM = {
  uri: 'https://api.example.com/',
  name: 'Example API',
  scopes: 'api:read Read your data\r\n\r\napi:write   Change your data\r\napi:ping',
  default_scopes: 'api:read',
  access_token_ttl_seconds: '600',
};

describe('admin console: resources', () => {
  it('is a tab of the platform; adds a resource through the form, lists it, edits it and deletes it; all audited as the operator', async () => {
    const p = await buildStandardPlatform(t.services);
    const list = `/admin/platforms/${p.id}/resources`;
    expect((await b.get(`/admin/platforms/${p.id}/clients`)).text).toContain(`<a href="${list}">Resources</a>`);
    const empty = await b.get(list);
    expect(empty.status).toBe(200);
    expect(empty.text).toContain('No resource yet.');

    const added = await b.post(list, FORM);
    expect(added.status).toBe(303);
    const id = added.headers.location.split('/').pop()!;
    expect(await t.services.admin.resources.get(cliActor(), p.id, id)).toMatchObject({
      uri: 'https://api.example.com/',
      name: 'Example API',
      defaultScopes: ['api:read'],
      accessTokenTtlSeconds: 600,
      scopes: [
        { name: 'api:read', description: 'Read your data' },
        { name: 'api:write', description: 'Change your data' },
        { name: 'api:ping', description: '' },
      ],
    });
    expect(await lastEvent(p.id, 'resource.created')).toMatchObject({
      actorType: 'operator',
      actorName: email,
      details: { resource_id: id },
    });
    const page = await b.follow(added);
    expect(unescape(page.text)).toContain('Resource "Example API" added.');
    expect(page.text).toContain('api:read Read your data\napi:write Change your data\napi:ping</textarea>');
    const listed = await b.get(list);
    expect(listed.text).toContain(`<a class="link" href="${list}/${id}">Example API</a>`);
    expect(listed.text).toContain('api:read api:write api:ping');

    const edited = await b.post(`${list}/${id}`, {
      ...FORM,
      name: 'Renamed API',
      default_scopes: '',
      access_token_ttl_seconds: '',
    });
    expect(edited.status).toBe(303);
    expect(unescape((await b.follow(edited)).text)).toContain('Changes saved.');
    expect(await t.services.resources.findByUri(p.id, FORM.uri)).toMatchObject({
      name: 'Renamed API',
      defaultScopes: [],
      accessTokenTtlSeconds: null,
    });
    expect(await lastEvent(p.id, 'resource.updated')).toMatchObject({
      actorType: 'operator',
      details: { name: { from: 'Example API', to: 'Renamed API' } },
    });

    await b.get(`${list}/${id}`);
    expect((await b.post(`${list}/${id}/delete`, {})).status).toBe(400); // not confirmed
    const deleted = await b.post(`${list}/${id}/delete`, { confirm: 'yes' });
    expect(deleted.status).toBe(303);
    expect(unescape((await b.follow(deleted)).text)).toContain('Resource "Renamed API" deleted.');
    expect(await t.services.resources.listForPlatform(p.id)).toEqual([]);
    expect(await lastEvent(p.id, 'resource.deleted')).toMatchObject({ actorType: 'operator' });
  });

  it('shows a refusal on the form, naming the field by its label, with what was typed', async () => {
    const p = await buildStandardPlatform(t.services);
    const list = `/admin/platforms/${p.id}/resources`;
    await b.get(list);
    for (const [form, message] of [
      [{ ...FORM, uri: 'https://api.example.com/#part' }, 'Resource URI: must not contain a fragment'],
      [{ ...FORM, default_scopes: 'api:admin' }, 'Default scopes: "api:admin" is not one of the resource\'s scopes'],
      [{ ...FORM, access_token_ttl_seconds: '30' }, 'Access-token lifetime: a whole number of seconds from 60'],
      [{ ...FORM, scopes: 'openid Sign you in' }, 'Scopes: "openid" is an OpenID Connect scope'],
    ] as const) {
      const res = await b.post(list, form);
      expect({ message, status: res.status }).toEqual({ message, status: 400 });
      expect(unescape(res.text)).toContain(message);
      expect(res.text).toContain(`value="${form.name}"`);
    }
    expect(await t.services.resources.list(p.id)).toEqual([]);
    expect((await b.post(list, FORM, false)).status).toBe(403); // CSRF
  });

  it('on a seed platform, explains that resources are for standard platforms and offers no form', async () => {
    const seed = await buildPlatform(t.services);
    const page = await b.get(`/admin/platforms/${seed.id}/resources`);
    expect(page.status).toBe(200);
    expect(page.text).toContain('id="resources-seed"');
    expect(page.text).not.toContain('Add resource');
    const res = await b.post(`/admin/platforms/${seed.id}/resources`, FORM);
    expect(res.status).toBe(409);
    expect(res.text).toContain('resources are for standard platforms only');
  });
});
