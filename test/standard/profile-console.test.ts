import { buildTestApp } from '../helpers';
import { buildOperator, consoleBrowser, signInConsole, type ConsoleBrowser } from '../admin/console-support';

// Issue 14, first slice: the console shows each platform's signing profile and each key's algorithm.
let t: Awaited<ReturnType<typeof buildTestApp>>;
let b: ConsoleBrowser;
beforeAll(async () => {
  t = await buildTestApp();
  b = consoleBrowser(t.app);
  await signInConsole(b, (await buildOperator(t.services)).email, () => new Date());
});
afterAll(() => t.close());

it('Platforms lists the signing profile; Keys shows each key\'s algorithm', async () => {
  const { platform } = await t.services.platforms.createPlatform(`Console standard ${Date.now()}`, undefined, 'standard');
  // Oldest first, a page at a time (the run's database holds other files' platforms): follow the pages to it.
  let url: string | undefined = '/admin/platforms';
  let row: string | undefined;
  while (url && !row) {
    const list: string = (await b.get(url)).text;
    expect(list).toContain('<th scope="col">Signing</th>');
    row = new RegExp(`<tr>\\s*<td><a class="link" href="/admin/platforms/${platform.id}">[\\s\\S]*?</tr>`).exec(list)?.[0];
    url = /href="(\/admin\/platforms\?cursor=[^"]+)"/.exec(list)?.[1];
  }
  expect(row).toMatch(/<span class="badge">standard<\/span>/);

  const keys = (await b.get(`/admin/platforms/${platform.id}/keys`)).text;
  for (const alg of ['HS512', 'RS256', 'ES256', 'EdDSA']) expect(keys).toContain(`<td>${alg}</td>`);
});
