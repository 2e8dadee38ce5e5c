import request from 'supertest';
import * as jose from 'jose';
import { buildTestApp, expectOAuthError } from '../helpers';
import { adminClient, adminToken } from '../admin/admin-api-client';
import { runCommand } from '../../src/cli/commands';
import type { Platform } from '../../src/domain/platform';

// "next key published before it signs, old key kept until its last token expires".
// The injected clock: tests move it past the publication delay and the access-token lifetime.
let offsetMs = 0;
const clock = () => new Date(Date.now() + offsetMs);
let t: Awaited<ReturnType<typeof buildTestApp>>;
let global: ReturnType<typeof adminClient>;
let delayMs: number;
let ttlMs: number;
beforeAll(async () => {
  t = await buildTestApp({}, clock);
  global = adminClient(t.app, await adminToken(t.services));
  delayMs = t.config.signingKeyPublicationSeconds * 1000;
  ttlMs = t.config.accessTokenTtlSeconds * 1000;
});
afterAll(() => t.close());
afterEach(() => {
  offsetMs = 0;
});

type Jwk = { kid: string; alg: string };
type ListedKey = {
  kid: string;
  alg: string;
  status: string;
  activates_at: string | null;
  rotated_at: string | null;
  retired_at: string | null;
};
const standardPlatform = async () =>
  (await t.services.platforms.createPlatform(`Rotating ${Date.now()}`, undefined, 'standard')).platform;
const jwks = async (platformId: string) =>
  (await request(t.app).get(`/oauth/jwks?platform_guid=${platformId}`).expect(200)).body as { keys: Jwk[] };
const kids = async (platformId: string, alg = 'RS256') =>
  (await jwks(platformId)).keys
    .filter((k) => k.alg === alg)
    .map((k) => k.kid)
    .sort();
const listed = async (platformId: string) =>
  (await global.get(`/platforms/${platformId}/keys`)).body.items as ListedKey[];
const rsKid = async (platformId: string) => (await t.services.signingKeys.activeAsymmetricKey(platformId, 'RS256')).kid;

/** An access token as the token endpoint signs it, its kid, and whether it verifies against the JWKS served now. */
async function accessToken(platform: Platform) {
  const jwt = await t.services.tokenSigner.signAccessToken(platform, {
    sub: 'someone',
    iat: Math.floor(clock().getTime() / 1000),
  });
  return { jwt, kid: jose.decodeProtectedHeader(jwt).kid as string };
}
async function verifiesWithJwks(platformId: string, jwt: string) {
  const keySet = jose.createLocalJWKSet(await jwks(platformId));
  return jose.jwtVerify(jwt, keySet, { currentDate: clock() }).then(
    () => true,
    () => false,
  );
}

describe('standard platform: key rotation with overlap', () => {
  it('publishes the new key at once; the old one signs until the delay has passed, then the new one; the old stays published until its tokens expire', async () => {
    const p = await standardPlatform();
    const oldKid = await rsKid(p.id);
    const rotated = await global.post(`/platforms/${p.id}/keys/rotate`, { alg: 'RS256' });
    expect(rotated.status).toBe(201);
    const newKid = rotated.body.kid as string;
    expect(rotated.body).toMatchObject({ previous_kid: oldKid, alg: 'RS256' });
    expect(new Date(rotated.body.activates_at).getTime() - Date.now()).toBeGreaterThan(delayMs - 60_000);

    // At once: both in the JWKS; tokens still signed by the old key.
    expect(await kids(p.id)).toEqual([oldKid, newKid].sort());
    const before = await accessToken(p);
    expect(before.kid).toBe(oldKid);
    expect(await verifiesWithJwks(p.id, before.jwt)).toBe(true);
    expect(await listed(p.id)).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          kid: newKid,
          status: 'next',
          activates_at: rotated.body.activates_at,
          rotated_at: null,
          retired_at: null,
        }),
        expect.objectContaining({ kid: oldKid, status: 'active', rotated_at: null }),
      ]),
    );

    // Just before the activation: still the old key.
    offsetMs = delayMs - 5_000;
    expect((await accessToken(p)).kid).toBe(oldKid);

    // Past it: the new key signs; the old one still verifies and is published.
    offsetMs = delayMs + 5_000;
    const after = await accessToken(p);
    expect(after.kid).toBe(newKid);
    expect(await verifiesWithJwks(p.id, after.jwt)).toBe(true);
    expect(await verifiesWithJwks(p.id, before.jwt)).toBe(true);
    expect(await kids(p.id)).toEqual([oldKid, newKid].sort());
    expect(await t.services.signingKeys.publicKeyById(p.id, oldKid)).toMatchObject({ alg: 'RS256' });
    const retiresAt = new Date(new Date(rotated.body.activates_at).getTime() + ttlMs).toISOString();
    expect(await listed(p.id)).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ kid: newKid, status: 'active', activates_at: rotated.body.activates_at }),
        expect.objectContaining({
          kid: oldKid,
          status: 'retiring',
          rotated_at: rotated.body.activates_at,
          retired_at: retiresAt,
        }),
      ]),
    );

    // Once the old key's last token has expired, it leaves the JWKS and verifies nothing.
    offsetMs = delayMs + ttlMs + 5_000;
    expect(await kids(p.id)).toEqual([newKid]);
    expect(await t.services.signingKeys.publicKeyById(p.id, oldKid)).toBeUndefined();
    expect((await listed(p.id)).find((k) => k.kid === oldKid)).toMatchObject({
      status: 'retired',
      retired_at: retiresAt,
    });
    // The other algorithms were never touched.
    expect((await jwks(p.id)).keys.map((k) => k.alg).sort()).toEqual(['ES256', 'EdDSA', 'RS256']);
  });

  it('every instance switches at the activation time from the stored time, without being told (no job, no reload)', async () => {
    const p = await standardPlatform();
    const other = await buildTestApp({}, clock); // a second instance on the same database
    try {
      const oldKid = await rsKid(p.id);
      const newKid = (await runCommand(t.services, ['key', 'rotate', '--platform', p.id, '--alg', 'RS256']))
        .kid as string;
      offsetMs = delayMs - 5_000;
      expect((await other.services.signingKeys.activeAsymmetricKey(p.id, 'RS256')).kid).toBe(oldKid); // loads (and caches) the keys
      offsetMs = delayMs + 5_000; // within its 30 s cache
      expect((await other.services.signingKeys.activeAsymmetricKey(p.id, 'RS256')).kid).toBe(newKid);
      expect((await t.services.signingKeys.activeAsymmetricKey(p.id, 'RS256')).kid).toBe(newKid);
    } finally {
      await other.close();
    }
  });

  it('--immediately (a compromised key): the new key signs at once; the old one stays published for its tokens unless retired', async () => {
    const p = await standardPlatform();
    const oldKid = (await t.services.signingKeys.activeAsymmetricKey(p.id, 'ES256')).kid;
    const out = await runCommand(t.services, ['key', 'rotate', '--platform', p.id, '--alg', 'ES256', '--immediately']);
    expect(out).toMatchObject({ alg: 'ES256', previous_kid: oldKid, activates_at: expect.any(String) });
    expect(Math.abs(new Date(out.activates_at as string).getTime() - Date.now())).toBeLessThan(60_000);
    expect((await t.services.signingKeys.activeAsymmetricKey(p.id, 'ES256')).kid).toBe(out.kid);
    expect(await kids(p.id, 'ES256')).toEqual([oldKid, out.kid as string].sort());
    expect((await listed(p.id)).find((k) => k.kid === oldKid)).toMatchObject({ status: 'retiring' });
    const [event] = (await t.services.audit.list({ platformId: p.id, kind: 'key.rotated' }, 1)).events;
    expect(event).toMatchObject({
      actorType: 'cli',
      details: { kid: out.kid, previous_kid: oldKid, alg: 'ES256', immediately: true },
    });

    await runCommand(t.services, ['key', 'retire', '--platform', p.id, '--kid', oldKid]);
    expect(await kids(p.id, 'ES256')).toEqual([out.kid]);

    // The API's body form
    const api = await global.post(`/platforms/${p.id}/keys/rotate`, { alg: 'EdDSA', immediately: true });
    expect(api.status).toBe(201);
    expect((await t.services.signingKeys.activeAsymmetricKey(p.id, 'EdDSA')).kid).toBe(api.body.kid);
  });

  it('rotating again while a key is next replaces it (it never signed); retiring a next key calls the rotation off', async () => {
    const p = await standardPlatform();
    const oldKid = await rsKid(p.id);
    const first = (await global.post(`/platforms/${p.id}/keys/rotate`, { alg: 'RS256' })).body;
    offsetMs = 60_000;
    const second = (await global.post(`/platforms/${p.id}/keys/rotate`, { alg: 'RS256' })).body;
    expect(second.previous_kid).toBe(oldKid);
    expect(new Date(second.activates_at).getTime()).toBeGreaterThan(new Date(first.activates_at).getTime());
    expect(await kids(p.id)).toEqual([oldKid, second.kid].sort());
    expect((await listed(p.id)).find((k) => k.kid === first.kid)).toMatchObject({ status: 'retired' });
    const [event] = (await t.services.audit.list({ platformId: p.id, kind: 'key.rotated' }, 1)).events;
    expect(event.details).toMatchObject({ kid: second.kid, replaced_next_kid: first.kid });
    // past the first one's activation time it does not sign
    offsetMs = delayMs + 5_000;
    expect(await rsKid(p.id)).toBe(oldKid);

    const retired = await global.post(`/platforms/${p.id}/keys/${second.kid}/retire`);
    expect(retired.status).toBe(200);
    expect(retired.body).toMatchObject({ kid: second.kid, status: 'retired' });
    expect(await kids(p.id)).toEqual([oldKid]);
    offsetMs = 2 * delayMs;
    expect(await rsKid(p.id)).toBe(oldKid);
  });

  it('after the activation the new key is the active one (409 to retire it) and the old one may be retired at once', async () => {
    const p = await standardPlatform();
    const oldKid = await rsKid(p.id);
    const { kid } = (await global.post(`/platforms/${p.id}/keys/rotate`, { alg: 'RS256' })).body;
    offsetMs = delayMs + 5_000;
    expectOAuthError(await global.post(`/platforms/${p.id}/keys/${kid}/retire`), 409, 'invalid_request');
    const old = await global.post(`/platforms/${p.id}/keys/${oldKid}/retire`);
    expect(old.body).toMatchObject({ kid: oldKid, status: 'retired' });
    expect(await kids(p.id)).toEqual([kid]);
    expect(await rsKid(p.id)).toBe(kid);
    const rows = await t.database.db('signing_keys').where({ platform_id: p.id, alg: 'RS256' });
    expect(rows.filter((r) => r.status === 'active').map((r) => r.kid)).toEqual([kid]);
    // and a later rotation starts from the new key
    const next = (await global.post(`/platforms/${p.id}/keys/rotate`, { alg: 'RS256' })).body;
    expect(next.previous_kid).toBe(kid);
  });

  it('HS512 rotation is unchanged: the new key signs at once, the answer has no activates_at; immediately is refused for it', async () => {
    const p = await standardPlatform();
    const hs = await global.post(`/platforms/${p.id}/keys/rotate`);
    expect(Object.keys(hs.body).sort()).toEqual(['kid', 'platform_guid', 'previous_kid']);
    expect((await t.services.signingKeys.activeKey(p.id)).kid).toBe(hs.body.kid);
    const bad = await global.post(`/platforms/${p.id}/keys/rotate`, { alg: 'HS512', immediately: true });
    expectOAuthError(bad, 400, 'invalid_request');
    expect(bad.body.error_description).toMatch(/^immediately: /);
    expectOAuthError(
      await global.post(`/platforms/${p.id}/keys/rotate`, { alg: 'RS256', immediately: 'yes' }),
      400,
      'invalid_request',
    );
  });
});
