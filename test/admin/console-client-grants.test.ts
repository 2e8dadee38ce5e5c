import { buildTestApp } from '../helpers';
import { cliActor } from '../../src/domain/admin';
import { buildPlatform, buildStandardPlatform } from '../factories';
import { buildOperator, consoleBrowser, signInConsole, type ConsoleBrowser } from './console-support';

// The console's grants-and-keys fields: on a standard platform's client forms only.
let t: Awaited<ReturnType<typeof buildTestApp>>;
let b: ConsoleBrowser;
beforeAll(async () => {
  t = await buildTestApp();
  const { email } = await buildOperator(t.services);
  b = consoleBrowser(t.app);
  await signInConsole(b, email, () => new Date());
});
afterAll(() => t.close());

const postForm = (path: string, fields: Record<string, string | string[]>) => {
  const body = new URLSearchParams({ _csrf: /name="_csrf" value="([^"]+)"/.exec(b.html)![1] });
  for (const [k, v] of Object.entries(fields)) for (const one of [v].flat()) body.append(k, one);
  return b.agent.post(path).type('form').send(body.toString());
};

describe('admin console: grants and keys', () => {
  it('creates a service client with client credentials and a JWK Set URL, then shows how it authenticates', async () => {
    const p = await buildStandardPlatform(t.services);
    const list = `/admin/platforms/${p.id}/clients`;
    expect((await b.get(list)).text).toContain('Keys (private_key_jwt)');
    const created = await postForm(list, {
      name: 'Nightly job',
      type: 'confidential',
      redirect_uris: '',
      post_logout_redirect_uris: '',
      grants_form: 'yes',
      grant_types: ['client_credentials'],
      token_exchange_resources: '',
      jwks_uri: 'https://jobs.example/jwks.json',
      jwks: '',
    });
    expect(created.status).toBe(303);
    const clientId = created.headers.location.split('/').pop()!;
    const stored = await t.services.admin.clients.get(cliActor(), p.id, clientId);
    expect(stored).toMatchObject({ grantTypes: ['client_credentials'], jwksUri: 'https://jobs.example/jwks.json' });
    expect(stored.sealedSecret).toBeNull();
    const page = await b.follow(created);
    expect(page.text).toContain('<code>private_key_jwt</code>');
    expect(page.text).not.toContain('id="client-secret"');
    expect(page.text).not.toContain('Rotate secret');
  });

  it('shows a refusal on the form, keeping what was typed', async () => {
    const p = await buildStandardPlatform(t.services);
    const list = `/admin/platforms/${p.id}/clients`;
    await b.get(list);
    const refused = await postForm(list, {
      name: 'Broken',
      type: 'confidential',
      redirect_uris: '',
      grants_form: 'yes',
      grant_types: ['client_credentials'],
      jwks: '{"keys": [',
      jwks_uri: '',
      token_exchange_resources: '',
    });
    expect(refused.status).toBe(400);
    expect(refused.text).toContain('JWK Set: not JSON');
    expect(refused.text).toContain('{&#34;keys&#34;: [');
  });

  it("keeps a seed platform's form without the fields", async () => {
    const p = await buildPlatform(t.services);
    expect((await b.get(`/admin/platforms/${p.id}/clients`)).text).not.toContain('grant_types');
  });
});
