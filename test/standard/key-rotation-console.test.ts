import { buildTestApp } from '../helpers';
import { buildOperator, consoleBrowser, signInConsole, type ConsoleBrowser } from '../admin/console-support';

// Key rotation on the console's Keys screen: a standard platform rotates one algorithm, the new key shown as next with when it signs.
let t: Awaited<ReturnType<typeof buildTestApp>>;
let b: ConsoleBrowser;
beforeAll(async () => {
  t = await buildTestApp();
  b = consoleBrowser(t.app);
  await signInConsole(b, (await buildOperator(t.services)).email, () => new Date());
});
afterAll(() => t.close());

const rowOf = (html: string, kid: string) =>
  new RegExp(`<tr>\\s*<td class="nowrap"><code>${kid}</code>[\\s\\S]*?</tr>`).exec(html)?.[0] ?? '';
const lastRotation = async (platformId: string) =>
  (await t.services.audit.list({ platformId, kind: 'key.rotated' }, 1)).events[0];

it('Keys of a standard platform: rotate an algorithm (next, with its time), at once, or call a next key off', async () => {
  const { platform: p } = await t.services.platforms.createPlatform(
    `Console keys ${Date.now()}`,
    undefined,
    'standard',
  );
  const keys = `/admin/platforms/${p.id}/keys`;
  const page = (await b.get(keys)).text;
  expect(page).toContain('<th scope="col">Signs from (UTC)</th>');
  expect(page).toMatch(/<option value="RS256" selected>RS256<\/option>/);
  const oldKid = (await t.services.signingKeys.activeAsymmetricKey(p.id, 'ES256')).kid;

  const rotated = await b.post(`${keys}/rotate`, { alg: 'ES256' });
  expect(rotated.status).toBe(303);
  const event = await lastRotation(p.id);
  expect(event).toMatchObject({
    actorType: 'operator',
    details: { alg: 'ES256', previous_kid: oldKid, immediately: false },
  });
  const kid = String(event.details.kid);
  const after = (await b.follow(rotated)).text;
  expect(after).toContain(
    `New ES256 key ${kid}: published now, signs from ${String(event.details.activates_at).slice(0, 16).replace('T', ' ')} UTC.`,
  );
  expect(rowOf(after, kid)).toContain('<span class="badge">next</span>');
  expect(rowOf(after, kid)).toContain(String(event.details.activates_at).slice(0, 19).replace('T', ' '));
  expect(rowOf(after, oldKid)).toContain('<span class="badge badge-ok">active</span>');
  expect((await t.services.signingKeys.activeAsymmetricKey(p.id, 'ES256')).kid).toBe(oldKid);

  // A next key can be called off (Retire), leaving the active key as it is.
  const off = await b.post(`${keys}/retire`, { kid });
  expect(off.status).toBe(303);
  expect(rowOf((await b.follow(off)).text, kid)).toContain('badge-bad">retired<');

  const now = await b.post(`${keys}/rotate`, { alg: 'ES256', immediately: 'yes' });
  expect(now.status).toBe(303);
  const immediate = await lastRotation(p.id);
  expect((await t.services.signingKeys.activeAsymmetricKey(p.id, 'ES256')).kid).toBe(immediate.details.kid);
  expect((await b.follow(now)).text).toContain(`New active ES256 key ${String(immediate.details.kid)}.`);

  const bad = await b.post(`${keys}/rotate`, { alg: 'HS512', immediately: 'yes' });
  expect(bad.status).toBe(400);
  expect(bad.text).toContain('immediately: HS512 keys always rotate at once');
});
