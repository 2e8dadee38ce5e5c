import request from 'supertest';
import { buildTestApp } from '../helpers';
import { buildPlatform } from '../factories';
import { buildOperator, consoleBrowser, signInConsole, type ConsoleBrowser } from '../admin/console-support';

// The console shows each platform's signing profile and each key's algorithm, creates a
// platform with a profile and switches it, through s.admin.platforms (same checks and audit as the API).
let t: Awaited<ReturnType<typeof buildTestApp>>;
let b: ConsoleBrowser;
let operatorEmail: string;
beforeAll(async () => {
  t = await buildTestApp();
  b = consoleBrowser(t.app);
  operatorEmail = (await buildOperator(t.services)).email;
  await signInConsole(b, operatorEmail, () => new Date());
});
afterAll(() => t.close());

const jwksAlgs = async (platformId: string) =>
  (
    (await request(t.app).get(`/oauth/jwks?platform_guid=${platformId}`).expect(200)).body.keys as Array<{
      alg: string;
    }>
  )
    .map((k) => k.alg)
    .sort();
/** The issuer of the seed-style discovery URL (it answers for both profiles), and the status of the standard path form. */
async function discovery(platformId: string) {
  const doc = (await request(t.app).get(`/.well-known/openid-configuration?platform_guid=${platformId}`).expect(200))
    .body as { issuer: string; jwks_uri: string };
  const pathForm = (await request(t.app).get(`/platforms/${platformId}/.well-known/openid-configuration`)).status;
  return { issuer: doc.issuer, pathForm };
}
const lastEvent = async (platformId: string, kind: 'platform.created' | 'platform.updated') =>
  (await t.services.audit.list({ platformId, kind }, 1)).events[0];
const alertOf = (html: string) => /id="form-error"><p>([\s\S]*?)<\/p>/.exec(html)?.[1];
const flashOf = (html: string) =>
  /<div class="alert alert-ok console-alert" role="status"><p>([\s\S]*?)<\/p>/.exec(html)?.[1];
const selectedIn = (html: string, id: string) =>
  /<option value="([^"]*)" selected/.exec(
    new RegExp(`<select id="${id}"[\\s\\S]*?</select>`).exec(html)?.[0] ?? '',
  )?.[1];

it("Platforms lists the signing profile; Keys shows each key's algorithm", async () => {
  const { platform } = await t.services.platforms.createPlatform(
    `Console standard ${Date.now()}`,
    undefined,
    'standard',
  );
  // Oldest first, a page at a time (the run's database holds other files' platforms): follow the pages to it.
  let url: string | undefined = '/admin/platforms';
  let row: string | undefined;
  while (url && !row) {
    const list: string = (await b.get(url)).text;
    expect(list).toContain('<th scope="col">Signing</th>');
    row = new RegExp(`<tr>\\s*<td><a class="link" href="/admin/platforms/${platform.id}">[\\s\\S]*?</tr>`).exec(
      list,
    )?.[0];
    url = /href="(\/admin\/platforms\?cursor=[^"]+)"/.exec(list)?.[1];
  }
  expect(row).toMatch(/<span class="badge">standard<\/span>/);

  const keys = (await b.get(`/admin/platforms/${platform.id}/keys`)).text;
  for (const alg of ['HS512', 'RS256', 'ES256', 'EdDSA']) expect(keys).toContain(`<td>${alg}</td>`);
});

it('"Create platform" takes the signing profile: a standard platform gets its asymmetric keys, JWKS, issuer and discovery; audited', async () => {
  const form = (await b.get('/admin/platforms')).text;
  expect(form).toContain(
    'A new platform starts with an active HS512 signing key; a standard one also gets an RS256, an ES256 and an EdDSA key.',
  );
  expect(form).not.toContain('starts with one active signing key');
  expect(selectedIn(form, 'platform-profile')).toBe('seed');
  expect(form).toContain('<option value="standard">standard</option>');

  const name = `Console-made standard ${Date.now()}`;
  const created = await b.post('/admin/platforms', { name, signing_profile: 'standard' });
  expect(created.status).toBe(303);
  const guid = /^\/admin\/platforms\/([0-9a-f-]{36})$/.exec(created.headers.location)![1];
  expect(flashOf((await b.follow(created)).text)).toContain(
    '(standard profile), with its HS512, RS256, ES256 and EdDSA signing keys.',
  );

  expect(await jwksAlgs(guid)).toEqual(['ES256', 'EdDSA', 'RS256']);
  expect(await discovery(guid)).toEqual({ issuer: `${t.config.baseUrl}/platforms/${guid}`, pathForm: 200 });
  expect(await lastEvent(guid, 'platform.created')).toMatchObject({
    actorType: 'operator',
    actorName: operatorEmail,
    details: {
      name,
      signing_profile: 'standard',
      keys_created: { RS256: expect.any(String), ES256: expect.any(String), EdDSA: expect.any(String) },
    },
  });

  // No choice sent (an older form): the API's default, seed.
  const plain = await b.post('/admin/platforms', { name: `Console-made seed ${Date.now()}` });
  const seedGuid = plain.headers.location.split('/').pop()!;
  expect(await jwksAlgs(seedGuid)).toEqual(['HS512']);
  expect(await discovery(seedGuid)).toEqual({ issuer: t.config.baseUrl, pathForm: 404 });
});

it('"Create platform" with a bad profile re-renders the form as typed with the API\'s message; without the CSRF token it is refused; nothing created', async () => {
  const fancy = `Fancy ${Date.now()}`;
  const forgedName = `Forged ${Date.now()}`;
  await b.get('/admin/platforms');
  const bad = await b.post('/admin/platforms', { name: fancy, signing_profile: 'fancy' });
  expect(bad.status).toBe(400);
  expect(alertOf(bad.text)).toMatch(
    /^Signing profile: Invalid option: expected one of &#34;seed&#34;\|&#34;standard&#34;$/,
  );
  expect(bad.text).toContain(`value="${fancy}"`);
  expect(bad.text).toMatch(/<select id="platform-profile"[^>]*aria-describedby="platform-profile-hint form-error"/);
  const forged = await b.post('/admin/platforms', { name: forgedName, signing_profile: 'standard' }, false);
  expect(forged.status).toBe(403);
  expect(await t.database.db('platforms').whereIn('name', [fancy, forgedName])).toEqual([]);
});

it('the Keys screen switches the signing profile both ways: JWKS, issuer and discovery follow; each switch audited as {from, to}', async () => {
  const p = await buildPlatform(t.services);
  const keys = `/admin/platforms/${p.id}/keys`;
  const page = (await b.get(keys)).text;
  expect(page).toContain('<h2 class="panel-title" id="profile-title">Signing profile</h2>');
  expect(page).toContain(`<form method="post" action="${keys}/profile" class="inline-form">`);
  expect(selectedIn(page, 'signing-profile')).toBe('seed');
  expect(page).toContain(`issuer <code>${t.config.baseUrl}</code>`);
  expect(await jwksAlgs(p.id)).toEqual(['HS512']);
  expect(await discovery(p.id)).toEqual({ issuer: t.config.baseUrl, pathForm: 404 });

  const toStandard = await b.post(`${keys}/profile`, { signing_profile: 'standard' });
  expect(toStandard.status).toBe(303);
  expect(toStandard.headers.location).toBe(keys);
  const after = (await b.follow(toStandard)).text;
  expect(flashOf(after)).toContain(`Signing profile: standard. The issuer is ${t.config.baseUrl}/platforms/${p.id}`);
  expect(selectedIn(after, 'signing-profile')).toBe('standard');
  for (const alg of ['RS256', 'ES256', 'EdDSA']) expect(after).toContain(`<td>${alg}</td>`);
  expect(await jwksAlgs(p.id)).toEqual(['ES256', 'EdDSA', 'RS256']);
  expect(await discovery(p.id)).toEqual({ issuer: `${t.config.baseUrl}/platforms/${p.id}`, pathForm: 200 });
  expect(await lastEvent(p.id, 'platform.updated')).toMatchObject({
    actorType: 'operator',
    actorName: operatorEmail,
    details: {
      signing_profile: { from: 'seed', to: 'standard' },
      keys_created: { RS256: expect.any(String), ES256: expect.any(String), EdDSA: expect.any(String) },
    },
  });

  const toSeed = await b.follow(await b.post(`${keys}/profile`, { signing_profile: 'seed' }));
  expect(flashOf(toSeed.text)).toContain(`Signing profile: seed. The issuer is ${t.config.baseUrl};`);
  expect(await jwksAlgs(p.id)).toEqual(['HS512']);
  expect(await discovery(p.id)).toEqual({ issuer: t.config.baseUrl, pathForm: 404 });
  expect((await lastEvent(p.id, 'platform.updated')).details).toEqual({
    signing_profile: { from: 'standard', to: 'seed' },
  }); // the keys are kept, not created again
});

it("the profile switch refuses a bad value with the API's message and a form without the CSRF token; nothing changes", async () => {
  const p = await buildPlatform(t.services);
  const keys = `/admin/platforms/${p.id}/keys`;
  await b.get(keys);
  const bad = await b.post(`${keys}/profile`, { signing_profile: 'HS512' });
  expect(bad.status).toBe(400);
  expect(alertOf(bad.text)).toMatch(/^Profile: Invalid option/);
  expect(bad.text).toContain('<h2 class="panel-title" id="keys-title">Signing keys</h2>'); // the screen again, with the error
  expect((await b.post(`${keys}/profile`, { signing_profile: 'standard' }, false)).status).toBe(403);
  expect(await jwksAlgs(p.id)).toEqual(['HS512']);
  expect(await lastEvent(p.id, 'platform.updated')).toBeUndefined();
});
