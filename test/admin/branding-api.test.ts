import request from 'supertest';
import { buildTestApp, expectOAuthError } from '../helpers';
import { buildClient, buildPlatform } from '../factories';
import { LOGO_MAX_BYTES } from '../../src/domain/branding';
import { browser } from '../support/browser';
import { authorizeQuery } from '../support/account-flows';
import { adminClient, adminToken, expectDocumented } from './admin-api-client';

const PNG = Buffer.concat([
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
  Buffer.from('IHDR not really a png body'),
]);
const JPEG = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.from('JFIF and the rest')]);
const SVG = Buffer.from(
  '<?xml version="1.0" encoding="UTF-8"?>\n<!-- logo -->\n<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10"><style>rect{fill:#0f766e}</style><rect width="10" height="10"/><text x="1" y="8">a &amp; b</text></svg>\n',
);

let t: Awaited<ReturnType<typeof buildTestApp>>;
let api: ReturnType<typeof adminClient>;
let token: string;
beforeAll(async () => {
  t = await buildTestApp();
  token = await adminToken(t.services);
  api = adminClient(t.app, token);
});
afterAll(() => t.close());

/** PUT of the image bytes, as a client sends a file; checked against the document like every other call. */
async function putLogo(guid: string, bytes: Buffer, contentType: string) {
  const path = `/admin/api/v1/platforms/${guid}/logo`;
  const res = await request(t.app)
    .put(path)
    .set('Authorization', `Bearer ${token}`)
    .set('Content-Type', contentType)
    .send(bytes);
  await expectDocumented(t.app, 'put', path, res);
  return res;
}

const lastUpdate = async (platformId: string) =>
  (await t.services.audit.list({ platformId, kind: 'platform.updated' }, 1)).events[0];

describe('admin API: platform branding', () => {
  it('sets logo URL, accent colour and support email (audited, seen by the pages at once), and clears them with "" and null', async () => {
    const p = await buildPlatform(t.services);
    await t.services.platforms.findPlatform(p.id); // cached before the change: the update must drop it
    const set = await api.patch(`/platforms/${p.id}`, {
      logo_url: 'https://cdn.example/logo.png',
      accent_color: '#0F766E',
      support_email: 'help@acme.example',
    });
    expect(set.status).toBe(200);
    expect(set.body).toMatchObject({
      logo_url: 'https://cdn.example/logo.png',
      accent_color: '#0f766e',
      support_email: 'help@acme.example',
      logo_version: null,
      uploaded_logo_path: null,
    });
    expect((await api.get(`/platforms/${p.id}`)).body.accent_color).toBe('#0f766e');
    expect((await t.services.platforms.findPlatform(p.id))!.branding).toEqual({
      logoUrl: 'https://cdn.example/logo.png',
      logoVersion: null,
      accentColor: '#0f766e',
      supportEmail: 'help@acme.example',
    });
    expect((await lastUpdate(p.id)).details).toEqual({
      logo_url: { from: null, to: 'https://cdn.example/logo.png' },
      accent_color: { from: null, to: '#0f766e' },
      support_email: { from: null, to: 'help@acme.example' },
    });

    const cleared = await api.patch(`/platforms/${p.id}`, { logo_url: '', accent_color: null, support_email: '  ' });
    expect(cleared.body).toMatchObject({ logo_url: null, accent_color: null, support_email: null });
    expect((await t.services.platforms.findPlatform(p.id))!.branding.accentColor).toBeNull();
  });

  it('refuses an accent colour without contrast (naming the ratio), a non-https logo URL and a bad email, in the error format, changing nothing', async () => {
    const p = await buildPlatform(t.services);
    const yellow = await api.patch(`/platforms/${p.id}`, { accent_color: '#ffff00' });
    expectOAuthError(yellow, 400, 'invalid_request');
    expect(yellow.body.error_description).toMatch(
      /^accent_color: has a contrast of 1\.07:1 against white; .*at least 4\.5:1/,
    );
    expectOAuthError(await api.patch(`/platforms/${p.id}`, { accent_color: 'teal' }), 400, 'invalid_request');
    for (const url of [
      'http://cdn.example/logo.png',
      'javascript:alert(1)',
      'data:image/png;base64,AAAA',
      'logo.png',
      `https://cdn.example/${'a'.repeat(2048)}`,
    ]) {
      const res = await api.patch(`/platforms/${p.id}`, { logo_url: url });
      expectOAuthError(res, 400, 'invalid_request');
      expect(res.body.error_description).toMatch(/^logo_url: /);
    }
    const email = await api.patch(`/platforms/${p.id}`, { support_email: 'not an email', name: 'Renamed' });
    expectOAuthError(email, 400, 'invalid_request');
    expect(email.body.error_description).toBe('support_email: "not an email" is not a valid email address');
    expect((await api.get(`/platforms/${p.id}`)).body).toMatchObject({
      name: p.name,
      accent_color: null,
      logo_url: null,
      support_email: null,
    });
  });

  it('uploads a logo (PNG, JPEG, SVG) checked by its content, serves it, replaces and removes it; audited', async () => {
    const p = await buildPlatform(t.services);
    const png = await putLogo(p.id, PNG, 'image/png');
    expect(png.status).toBe(200);
    expect(png.body.logo_version).toMatch(/^[A-Za-z0-9_-]{16}$/);
    expect(png.body.uploaded_logo_path).toBe(`/platforms/${p.id}/logo?v=${png.body.logo_version}`);
    expect((await lastUpdate(p.id)).details).toEqual({
      logo: { from: null, to: png.body.logo_version, content_type: 'image/png', bytes: PNG.length },
    });

    const served = await request(t.app)
      .get(png.body.uploaded_logo_path)
      .buffer(true)
      .parse((res, cb) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c)).on('end', () => cb(null, Buffer.concat(chunks)));
      });
    expect(served.status).toBe(200);
    expect(served.headers['content-type']).toBe('image/png');
    expect(Buffer.compare(served.body as Buffer, PNG)).toBe(0);
    expect(served.headers['cache-control']).toBe('public, max-age=31536000, immutable');

    const svg = await putLogo(p.id, SVG, 'image/svg+xml; charset=utf-8');
    expect(svg.status).toBe(200);
    expect(svg.body.logo_version).not.toBe(png.body.logo_version);
    const svgServed = await request(t.app).get(svg.body.uploaded_logo_path);
    expect(svgServed.headers['content-type']).toMatch(/^image\/svg\+xml/);
    expect(svgServed.headers['content-security-policy']).toBe("default-src 'none'; style-src 'unsafe-inline'; sandbox");
    expect(svgServed.headers['x-content-type-options']).toBe('nosniff');
    // The old version's URL now gets the current logo, revalidated (never the old one for a year).
    const old = await request(t.app).get(png.body.uploaded_logo_path);
    expect({ status: old.status, type: old.headers['content-type'], cache: old.headers['cache-control'] }).toEqual({
      status: 200,
      type: expect.stringMatching(/^image\/svg\+xml/),
      cache: 'no-cache',
    });
    expect((await request(t.app).get(`/platforms/${p.id}/logo`)).headers['cache-control']).toBe('no-cache');

    expect((await putLogo(p.id, JPEG, 'image/jpeg')).body.logo_version).toMatch(/^[A-Za-z0-9_-]{16}$/);

    const removed = await api.delete(`/platforms/${p.id}/logo`);
    expect(removed.body).toMatchObject({ logo_version: null, uploaded_logo_path: null });
    expect((await lastUpdate(p.id)).details).toEqual({ logo: { from: expect.any(String), to: null } });
    const gone = await request(t.app).get(svg.body.uploaded_logo_path);
    expectOAuthError(gone, 404, 'not_found');
    // Removing again: nothing to remove, nothing changes.
    expect((await api.delete(`/platforms/${p.id}/logo`)).status).toBe(200);
  });

  it('refuses a logo whose content is not its type, an SVG that is not an <svg> document, an oversized or empty file, another type (415)', async () => {
    const p = await buildPlatform(t.services);
    const mismatch = await putLogo(p.id, JPEG, 'image/png');
    expectOAuthError(mismatch, 400, 'invalid_request');
    expect(mismatch.body.error_description).toBe(
      'the logo is image/jpeg by its content, not the image/png it was sent as',
    );
    const fakePng = await putLogo(p.id, Buffer.from('GIF? no, just text'), 'image/png');
    expectOAuthError(fakePng, 400, 'invalid_request');
    expect(fakePng.body.error_description).toMatch(/^the logo is none of image\/png/);
    const bad: Array<[string, RegExp]> = [
      ['<html><body>hi</body></html>', /has the root element <html>, not <svg>/],
      ['<svg xmlns="http://www.w3.org/2000/svg"><g></svg>', /not well-formed/],
      ['<!DOCTYPE svg [<!ENTITY x "y">]><svg xmlns="http://www.w3.org/2000/svg"/>', /DOCTYPE/],
      ['<svg viewBox="0 0 1 1"></svg>', /xmlns/],
      [
        '<svg xmlns="http://www.w3.org/2000/svg"></svg><svg xmlns="http://www.w3.org/2000/svg"></svg>',
        /more than one root/,
      ],
    ];
    for (const [text, why] of bad) {
      const res = await putLogo(p.id, Buffer.from(text), 'image/svg+xml');
      expectOAuthError(res, 400, 'invalid_request');
      expect(res.body.error_description).toMatch(why);
    }
    const big = await putLogo(p.id, Buffer.concat([PNG, Buffer.alloc(LOGO_MAX_BYTES)]), 'image/png');
    expectOAuthError(big, 400, 'invalid_request');
    expect(big.body.error_description).toBe(
      `the logo is ${PNG.length + LOGO_MAX_BYTES} bytes; at most ${LOGO_MAX_BYTES} (256 KiB)`,
    );
    expect((await putLogo(p.id, Buffer.concat([PNG, Buffer.alloc(LOGO_MAX_BYTES * 2)]), 'image/png')).status).toBe(413);
    expectOAuthError(await putLogo(p.id, Buffer.alloc(0), 'image/png'), 400, 'invalid_request');
    const json = await putLogo(p.id, Buffer.from('{}'), 'application/json');
    expectOAuthError(json, 415, 'invalid_request');
    expectOAuthError(await putLogo(p.id, PNG, 'image/bmp'), 415, 'invalid_request');
    expect((await api.get(`/platforms/${p.id}`)).body.logo_version).toBeNull();
    expectOAuthError(await putLogo('00000000-0000-4000-8000-000000000000', PNG, 'image/png'), 404, 'not_found');
  });

  it('GET /platforms/:guid/logo: 404 in the error format for no logo, an unknown or a malformed guid', async () => {
    const p = await buildPlatform(t.services);
    for (const path of [
      `/platforms/${p.id}/logo`,
      '/platforms/00000000-0000-4000-8000-000000000000/logo?v=abc',
      '/platforms/not-a-guid/logo',
    ]) {
      const res = await request(t.app).get(path);
      expectOAuthError(res, 404, 'not_found');
    }
  });

  it('a platform token brands its own platform only', async () => {
    const mine = await buildPlatform(t.services);
    const other = await buildPlatform(t.services);
    const scoped = adminClient(t.app, await adminToken(t.services, mine.id, 'scoped'));
    expect((await scoped.patch(`/platforms/${mine.id}`, { accent_color: '#1d4ed8' })).status).toBe(200);
    expectOAuthError(await scoped.patch(`/platforms/${other.id}`, { accent_color: '#1d4ed8' }), 404, 'not_found');
  });

  it('the hosted sign-in page shows the accent colour and the uploaded logo right after an admin update', async () => {
    const p = await buildPlatform(t.services);
    const c = await buildClient(t.services, p.id);
    const b = browser(t.app);
    await b.get(`/oauth/authorize?${authorizeQuery(p, c)}`);
    expect(b.html).not.toContain('#0f766e');
    await api.patch(`/platforms/${p.id}`, { accent_color: '#0f766e', support_email: 'help@acme.example' });
    const version = (await putLogo(p.id, PNG, 'image/png')).body.logo_version;
    await b.get(`/oauth/authorize?${authorizeQuery(p, c, { state: 's-2' })}`);
    expect(/<style>([^<]*)<\/style>/.exec(b.html)?.[1]).toContain('--brand:#0f766e');
    expect(b.html).toMatch(new RegExp(`<img class="brand-logo" src="/platforms/${p.id}/logo\\?v=${version}"`));
    expect(b.html).toContain('help@acme.example');
  });
});

describe('admin API: client metadata (RFC 7591)', () => {
  const base = { name: 'Web', type: 'confidential', redirect_uris: ['https://app.example/cb'], scopes: 'openid' };

  it('registers, shows, changes and clears logo_uri, client_uri, policy_uri, tos_uri; audited', async () => {
    const p = await buildPlatform(t.services);
    const created = await api.post(`/platforms/${p.id}/clients`, {
      ...base,
      logo_uri: 'https://app.example/logo.svg',
      client_uri: 'https://app.example',
      policy_uri: 'http://localhost:3000/privacy',
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      logo_uri: 'https://app.example/logo.svg',
      client_uri: 'https://app.example',
      policy_uri: 'http://localhost:3000/privacy',
      tos_uri: null,
    });
    const id = created.body.client_id;
    const created_event = (await t.services.audit.list({ platformId: p.id, kind: 'client.created' }, 1)).events[0];
    expect(created_event.details).toMatchObject({ logo_uri: 'https://app.example/logo.svg', tos_uri: null });

    const updated = await api.patch(`/platforms/${p.id}/clients/${id}`, {
      tos_uri: 'https://app.example/terms',
      logo_uri: '',
    });
    expect(updated.body).toMatchObject({
      logo_uri: null,
      client_uri: 'https://app.example',
      tos_uri: 'https://app.example/terms',
    });
    expect((await t.services.audit.list({ platformId: p.id, kind: 'client.updated' }, 1)).events[0].details).toEqual({
      logo_uri: { from: 'https://app.example/logo.svg', to: null },
      tos_uri: { from: null, to: 'https://app.example/terms' },
    });
    const cleared = await api.patch(`/platforms/${p.id}/clients/${id}`, {
      client_uri: null,
      policy_uri: null,
      tos_uri: null,
    });
    expect(cleared.body).toMatchObject({ logo_uri: null, client_uri: null, policy_uri: null, tos_uri: null });
    expect((await api.get(`/platforms/${p.id}/clients/${id}`)).body.client_uri).toBeNull();
  });

  it('refuses javascript:, data:, http: off loopback, relative and over-long URLs, naming the field', async () => {
    const p = await buildPlatform(t.services);
    const c = await buildClient(t.services, p.id);
    const cases: Array<[string, string]> = [
      ['logo_uri', 'javascript:alert(1)'],
      ['logo_uri', 'data:image/svg+xml,<svg/>'],
      ['client_uri', 'http://app.example'],
      ['policy_uri', '/privacy'],
      ['tos_uri', `https://app.example/${'t'.repeat(2040)}`],
      ['client_uri', 'https://user:pw@app.example'],
    ];
    for (const [field, value] of cases) {
      const res = await api.patch(`/platforms/${p.id}/clients/${c.id}`, { [field]: value });
      expectOAuthError(res, 400, 'invalid_request');
      expect(res.body.error_description).toMatch(new RegExp(`^${field}: `));
    }
    expectOAuthError(
      await api.post(`/platforms/${p.id}/clients`, { ...base, logo_uri: 'http://cdn.example/x.png' }),
      400,
      'invalid_request',
    );
    expect((await api.get(`/platforms/${p.id}/clients/${c.id}`)).body).toMatchObject({
      logo_uri: null,
      client_uri: null,
      policy_uri: null,
      tos_uri: null,
    });
  });
});
