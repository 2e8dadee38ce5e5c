import request from 'supertest';
import { buildTestApp } from '../helpers';
import { buildClient, buildPlatform } from '../factories';
import { LOGO_MAX_BYTES } from '../../src/domain/branding';
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

const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.from('rest')]);
const csrf = () => /name="_csrf" value="([^"]+)"/.exec(b.html)![1];
const alertOf = (html: string) => /class="alert alert-error[^"]*"[^>]*><p>([^<]*)</.exec(html)?.[1];
const upload = (platformId: string, bytes: Buffer, filename: string, token = csrf()) =>
  b.agent
    .post(`/admin/platforms/${platformId}/branding/logo`)
    .field('_csrf', token)
    .attach('logo', bytes, { filename, contentType: 'application/octet-stream' });

describe('admin console: branding', () => {
  it('saves logo URL, accent colour and support email (audited as the operator), refuses a low contrast with its ratio, clears with empty fields', async () => {
    const p = await buildPlatform(t.services);
    const page = await b.get(`/admin/platforms/${p.id}/branding`);
    expect(page.status).toBe(200);
    expect(page.text).toContain('aria-current="page">Branding</a>');

    const refused = await b.post(`/admin/platforms/${p.id}/branding`, {
      logo_url: 'https://cdn.example/l.png',
      accent_color: '#ffff00',
      support_email: 'help@acme.example',
    });
    expect(refused.status).toBe(400);
    // The form's label, not the API's field name.
    expect(alertOf(refused.text)).toMatch(/^Accent colour: has a contrast of 1\.07:1 against white/);
    expect(refused.text).not.toContain('accent_color:');
    expect(refused.text).toContain('value="#ffff00"'); // the form as typed

    const saved = await b.follow(
      await b.post(`/admin/platforms/${p.id}/branding`, {
        logo_url: 'https://cdn.example/l.png',
        accent_color: '#0f766e',
        support_email: 'help@acme.example',
      }),
    );
    expect(saved.text).toContain('Branding saved.');
    expect(saved.text).toContain('<img src="https://cdn.example/l.png"');
    expect((await t.services.platforms.findPlatform(p.id))!.branding).toMatchObject({
      accentColor: '#0f766e',
      supportEmail: 'help@acme.example',
    });
    const event = (await t.services.audit.list({ platformId: p.id, kind: 'platform.updated' }, 1)).events[0];
    expect(event).toMatchObject({
      actorType: 'operator',
      actorName: email,
      details: { accent_color: { from: null, to: '#0f766e' } },
    });

    await b.follow(
      await b.post(`/admin/platforms/${p.id}/branding`, { logo_url: '', accent_color: '', support_email: '' }),
    );
    expect((await t.services.platforms.findPlatform(p.id))!.branding).toMatchObject({
      logoUrl: null,
      accentColor: null,
      supportEmail: null,
    });
  });

  it('uploads a logo from the form (multipart, CSRF-checked), refuses a bad file with a message, removes it', async () => {
    const p = await buildPlatform(t.services);
    await b.get(`/admin/platforms/${p.id}/branding`);
    expect((await upload(p.id, PNG, 'logo.png', 'forged')).status).toBe(403);

    const bad = await upload(p.id, Buffer.from('<html></html>'), 'logo.svg');
    expect(bad.status).toBe(400);
    expect(alertOf(bad.text)).toMatch(/the logo is none of/);
    const big = await upload(p.id, Buffer.concat([PNG, Buffer.alloc(LOGO_MAX_BYTES)]), 'big.png');
    expect(alertOf(big.text)).toMatch(/at most 262144/);
    await b.get(`/admin/platforms/${p.id}/branding`);
    const none = await b.agent.post(`/admin/platforms/${p.id}/branding/logo`).field('_csrf', csrf());
    expect(alertOf(none.text)).toBe('choose an image file to upload');

    await b.get(`/admin/platforms/${p.id}/branding`);
    const done = await b.follow(await upload(p.id, PNG, 'logo.png'));
    expect(done.text).toContain('Logo uploaded.');
    const version = (await t.services.admin.platforms.get({ actorType: 'cli', platformId: null }, p.id)).branding
      .logoVersion;
    expect(done.text).toContain(`<img src="/platforms/${p.id}/logo?v=${version}"`);
    expect((await request(t.app).get(`/platforms/${p.id}/logo?v=${version}`)).status).toBe(200);

    const removed = await b.follow(await b.post(`/admin/platforms/${p.id}/branding/logo/remove`, {}));
    expect(removed.text).toContain('Uploaded logo removed.');
    expect((await request(t.app).get(`/platforms/${p.id}/logo?v=${version}`)).status).toBe(404);
  });

  it("edits a client's RFC 7591 metadata on its page; an http URL off loopback is refused", async () => {
    const p = await buildPlatform(t.services);
    const c = await buildClient(t.services, p.id);
    const page = await b.get(`/admin/platforms/${p.id}/clients/${c.id}`);
    expect(page.text).toContain('name="logo_uri"');
    const fields = {
      name: c.name,
      type: c.type,
      redirect_uris: c.redirectUris.join('\n'),
      scopes: 'openid',
      logo_uri: 'https://app.example/logo.png',
      client_uri: 'https://app.example',
      policy_uri: '',
      tos_uri: 'http://cdn.example/terms',
    };
    const refused = await b.post(`/admin/platforms/${p.id}/clients/${c.id}`, fields);
    expect(refused.status).toBe(400);
    expect(alertOf(refused.text)).toMatch(/^Terms of service: /);
    const saved = await b.follow(
      await b.post(`/admin/platforms/${p.id}/clients/${c.id}`, { ...fields, tos_uri: 'https://app.example/terms' }),
    );
    expect(saved.text).toContain('value="https://app.example/logo.png"');
    const client = await t.services.admin.clients.get({ actorType: 'cli', platformId: null }, p.id, c.id);
    expect(client).toMatchObject({
      logoUri: 'https://app.example/logo.png',
      clientUri: 'https://app.example',
      policyUri: null,
      tosUri: 'https://app.example/terms',
    });
  });
});
