import { buildTestApp } from '../helpers';
import { cliActor } from '../../src/domain/admin';
import { buildPlatform } from '../factories';
import { buildOperator, consoleBrowser, signInConsole, type ConsoleBrowser } from './console-support';

// The console's client forms carry the ID-token algorithm (standard platforms) and the logout registration.
let t: Awaited<ReturnType<typeof buildTestApp>>;
let b: ConsoleBrowser;
beforeAll(async () => {
  t = await buildTestApp();
  b = consoleBrowser(t.app);
  await signInConsole(b, (await buildOperator(t.services)).email, () => new Date());
});
afterAll(() => t.close());

const lastEvent = async (platformId: string, kind: 'client.created' | 'client.updated') =>
  (await t.services.audit.list({ platformId, kind }, 1)).events[0];
const selected = (html: string) =>
  /<option value="([^"]*)" selected/.exec(
    /<select id="client-id-token-alg"[\s\S]*?<\/select>/.exec(html)?.[0] ?? '',
  )?.[1];
const valueOf = (html: string, id: string) => new RegExp(`id="${id}"[^>]*value="([^"]*)"`).exec(html)?.[1];
const checked = (html: string, name: string) => new RegExp(`name="${name}" value="yes" checked`).test(html);
const FORM = { name: 'Shop', type: 'confidential', redirect_uris: 'https://shop.example/cb', scopes: 'openid' };

describe('admin console: client ID-token algorithm and logout', () => {
  it("a standard platform's client is created and edited with them; shown again on its page; audited", async () => {
    const { platform: p } = await t.services.platforms.createPlatform(
      `Console standard ${Date.now()}`,
      undefined,
      'standard',
    );
    const list = `/admin/platforms/${p.id}/clients`;
    const empty = (await b.get(list)).text;
    expect(empty).toContain('<option value="">Default (RS256)</option>');
    for (const alg of ['RS256', 'ES256', 'EdDSA', 'HS512'])
      expect(empty).toContain(`<option value="${alg}">${alg}</option>`);
    expect(empty).toContain('name="backchannel_logout_uri"');
    expect(empty).toContain('name="frontchannel_logout_uri"');

    const created = await b.post(list, {
      ...FORM,
      id_token_signed_response_alg: 'ES256',
      backchannel_logout_uri: 'https://shop.example/bc',
      backchannel_logout_session_required: 'yes',
      frontchannel_logout_uri: '',
    });
    expect(created.status).toBe(303);
    const clientId = created.headers.location.split('/').pop()!;
    expect((await lastEvent(p.id, 'client.created')).details).toMatchObject({
      id_token_signed_response_alg: 'ES256',
      backchannel_logout_uri: 'https://shop.example/bc',
      backchannel_logout_session_required: true,
      frontchannel_logout_uri: null,
      frontchannel_logout_session_required: false,
    });
    const page = (await b.follow(created)).text;
    expect(selected(page)).toBe('ES256');
    expect(valueOf(page, 'client-backchannel')).toBe('https://shop.example/bc');
    expect(valueOf(page, 'client-frontchannel')).toBe('');
    expect(checked(page, 'backchannel_logout_session_required')).toBe(true);
    expect(checked(page, 'frontchannel_logout_session_required')).toBe(false);

    // The edit form posts every field: "Default" clears the algorithm, an empty URI clears it.
    const edited = await b.post(`${list}/${clientId}`, {
      name: 'Shop',
      redirect_uris: 'https://shop.example/cb',
      scopes: 'openid',
      id_token_signed_response_alg: '',
      backchannel_logout_uri: '',
      frontchannel_logout_uri: 'https://shop.example/fc',
      frontchannel_logout_session_required: 'yes',
    });
    expect(edited.status).toBe(303);
    expect((await lastEvent(p.id, 'client.updated')).details).toEqual({
      id_token_signed_response_alg: { from: 'ES256', to: null },
      backchannel_logout_uri: { from: 'https://shop.example/bc', to: null },
      backchannel_logout_session_required: { from: true, to: false },
      frontchannel_logout_uri: { from: null, to: 'https://shop.example/fc' },
      frontchannel_logout_session_required: { from: false, to: true },
    });
    const after = (await b.follow(edited)).text;
    expect(selected(after)).toBeUndefined();
    expect(valueOf(after, 'client-frontchannel')).toBe('https://shop.example/fc');
    expect(checked(after, 'frontchannel_logout_session_required')).toBe(true);
  });

  it("bad input re-renders the form as typed with the API's message and a 400; nothing written", async () => {
    const { platform: p } = await t.services.platforms.createPlatform(
      `Console standard ${Date.now()}`,
      undefined,
      'standard',
    );
    const list = `/admin/platforms/${p.id}/clients`;
    await b.get(list);
    const res = await b.post(list, {
      ...FORM,
      type: 'public',
      id_token_signed_response_alg: 'HS512',
      backchannel_logout_uri: 'https://shop.example/bc#x',
    });
    expect(res.status).toBe(400);
    expect(res.text).toContain('ID-token algorithm: HS512');
    expect(selected(res.text)).toBe('HS512');
    expect(valueOf(res.text, 'client-backchannel')).toBe('https://shop.example/bc#x');
    const fragment = await b.post(list, { ...FORM, backchannel_logout_uri: 'https://shop.example/bc#x' });
    expect(fragment.status).toBe(400);
    expect(fragment.text).toContain(
      'Back-channel logout URI: &#34;https://shop.example/bc#x&#34; must not contain a fragment',
    );
    expect((await t.services.admin.clients.list(cliActor(), p.id, { limit: 10 })).items).toEqual([]);
  });

  it("a seed platform's forms have no algorithm (its ID tokens are HS512) but do have the logout fields", async () => {
    const p = await buildPlatform(t.services);
    const list = `/admin/platforms/${p.id}/clients`;
    const html = (await b.get(list)).text;
    expect(html).not.toContain('id_token_signed_response_alg');
    expect(html).toContain('name="backchannel_logout_uri"');
    const created = await b.post(list, { ...FORM, frontchannel_logout_uri: 'https://shop.example/fc' });
    expect(created.status).toBe(303);
    const clientId = created.headers.location.split('/').pop()!;
    const client = await t.services.admin.clients.get(cliActor(), p.id, clientId);
    expect(client).toMatchObject({ idTokenSignedResponseAlg: null, frontchannelLogoutUri: 'https://shop.example/fc' });
    // Posting an algorithm anyway is refused with the API's message.
    await b.get(`${list}/${clientId}`);
    const refused = await b.post(`${list}/${clientId}`, {
      name: 'Shop',
      redirect_uris: 'https://shop.example/cb',
      scopes: 'openid',
      id_token_signed_response_alg: 'RS256',
    });
    expect(refused.status).toBe(400);
    expect(refused.text).toContain('ID-token algorithm: applies to standard platforms only');
  });
});
