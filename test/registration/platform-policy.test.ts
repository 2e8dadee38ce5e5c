import { buildTestApp } from '../helpers';
import { adminClient, adminToken } from '../admin/admin-api-client';
import { buildOperator, consoleBrowser, signInConsole } from '../admin/console-support';
import { runCommand } from '../../src/cli/commands';

// The registration policy and client ID metadata documents of a platform: admin API, CLI, console.
let t: Awaited<ReturnType<typeof buildTestApp>>;
let api: ReturnType<typeof adminClient>;
beforeAll(async () => {
  t = await buildTestApp();
  api = adminClient(t.app, await adminToken(t.services));
});
afterAll(() => t.close());

const newPlatform = async (profile: 'seed' | 'standard') =>
  (await api.post('/platforms', { name: `Policy ${profile}`, signing_profile: profile })).body.platform_guid as string;

describe('platform self-registration policy', () => {
  it('defaults to off; a standard platform takes token/open and host patterns (normalised), audited as {from, to}', async () => {
    const guid = await newPlatform('standard');
    expect((await api.get(`/platforms/${guid}`)).body).toMatchObject({
      registration: 'off',
      client_metadata_documents: 'off',
    });
    const res = await api.patch(`/platforms/${guid}`, {
      registration: 'open',
      client_metadata_documents: '  APP.example.org *.example.com app.example.org ',
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      registration: 'open',
      client_metadata_documents: 'app.example.org *.example.com',
    });
    const [event] = (await t.services.audit.list({ platformId: guid }, 1)).events;
    expect(event.details).toEqual({
      registration: { from: 'off', to: 'open' },
      client_metadata_documents: { from: 'off', to: 'app.example.org *.example.com' },
    });
    expect(
      (await api.patch(`/platforms/${guid}`, { client_metadata_documents: 'on', registration: 'token' })).body,
    ).toMatchObject({ registration: 'token', client_metadata_documents: 'on' });
  });

  it('refuses anything but off on a seed platform, naming the field, and a switch back to seed while registration is on', async () => {
    const seed = await newPlatform('seed');
    const reg = await api.patch(`/platforms/${seed}`, { registration: 'open' });
    expect(reg.status).toBe(400);
    expect(reg.body.error_description).toMatch(/^registration: applies to standard platforms only/);
    const docs = await api.patch(`/platforms/${seed}`, { client_metadata_documents: 'on' });
    expect(docs.body.error_description).toMatch(/^client_metadata_documents: applies to standard platforms only/);
    expect(
      (await api.patch(`/platforms/${seed}`, { registration: 'off', client_metadata_documents: 'off' })).status,
    ).toBe(200);

    const standard = await newPlatform('standard');
    await api.patch(`/platforms/${standard}`, { registration: 'token' });
    const back = await api.patch(`/platforms/${standard}`, { signing_profile: 'seed' });
    expect(back.status).toBe(400);
    expect(back.body.error_description).toMatch(/^registration:/);
    expect((await api.get(`/platforms/${standard}`)).body).toMatchObject({
      signing_profile: 'standard',
      registration: 'token',
    });
  });

  it('refuses bad values', async () => {
    const guid = await newPlatform('standard');
    for (const body of [
      { registration: 'maybe' },
      { client_metadata_documents: 'https://x.example' },
      { client_metadata_documents: '*' },
      { client_metadata_documents: '' },
      { client_metadata_documents: 'a..b' },
    ]) {
      const res = await api.patch(`/platforms/${guid}`, body);
      expect(res.status).toBe(400);
      expect(res.body.error_description).toMatch(new RegExp(Object.keys(body)[0]));
    }
  });

  it('the CLI sets both (platform update --registration --client-metadata-documents)', async () => {
    const guid = await newPlatform('standard');
    const out = await runCommand(t.services, [
      'platform',
      'update',
      '--platform',
      guid,
      '--registration',
      'token',
      '--client-metadata-documents',
      '*.example.com',
    ]);
    expect(out).toMatchObject({ registration: 'token', client_metadata_documents: '*.example.com' });
    const seed = await newPlatform('seed');
    await expect(
      runCommand(t.services, ['platform', 'update', '--platform', seed, '--registration', 'open']),
    ).rejects.toThrow(/registration: applies to standard platforms only/);
  });

  it("the console sets both on a standard platform's Keys screen, and shows no such form on a seed platform", async () => {
    const guid = await newPlatform('standard');
    const seed = await newPlatform('seed');
    const operator = await buildOperator(t.services);
    const b = consoleBrowser(t.app);
    await signInConsole(b, operator.email, () => new Date());
    await b.get(`/admin/platforms/${guid}/keys`);
    expect(b.html).toContain('Client registration');
    const done = await b.follow(
      await b.post(`/admin/platforms/${guid}/keys/self-registration`, {
        registration: 'open',
        client_metadata_documents: 'app.example.org',
      }),
    );
    expect(done.status).toBe(200);
    expect(done.text).toContain('Client registration: open');
    expect((await api.get(`/platforms/${guid}`)).body).toMatchObject({
      registration: 'open',
      client_metadata_documents: 'app.example.org',
    });
    const bad = await b.post(`/admin/platforms/${guid}/keys/self-registration`, {
      registration: 'open',
      client_metadata_documents: 'not a host!',
    });
    expect(bad.text).toContain('Client ID metadata documents');
    await b.get(`/admin/platforms/${seed}/keys`);
    expect(b.html).not.toContain('Client registration');
  });
});
