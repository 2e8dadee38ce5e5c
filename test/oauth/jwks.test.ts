import request from 'supertest';
import { buildTestApp, expectOAuthError } from '../helpers';
import { buildPlatform } from '../factories';

let t: Awaited<ReturnType<typeof buildTestApp>>;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(() => t.close());

const jwks = (platformId: string) => request(t.app).get(`/oauth/jwks?platform_guid=${platformId}`);

describe('GET /oauth/jwks', () => {
  it('lists oct/HS512/sig descriptors with a kid and never the key material', async () => {
    const p = await buildPlatform(t.services);
    const res = await jwks(p.id).expect(200);
    expect(res.headers['cache-control']).toBe('public, max-age=3600');
    expect(res.body.keys).toHaveLength(1);
    const [key] = res.body.keys;
    expect(key).toEqual({ kty: 'oct', alg: 'HS512', use: 'sig', kid: expect.any(String) });
    expect(JSON.stringify(res.body)).not.toMatch(/"k"/);
  });

  it('keeps a rotated key listed until it is retired, with the new one first', async () => {
    const p = await buildPlatform(t.services);
    const before = (await jwks(p.id)).body.keys[0].kid;
    const kid = await t.services.platforms.rotateKey(p.id);
    const after = (await jwks(p.id).expect(200)).body.keys.map((k: { kid: string }) => k.kid);
    expect(after).toEqual([kid, before]);
  });

  it('drops a retired key once every token it signed has expired', async () => {
    const p = await buildPlatform(t.services);
    const old = (await jwks(p.id)).body.keys[0].kid;
    await t.services.platforms.rotateKey(p.id);
    // an app whose clock is past the access-token lifetime no longer lists the old key
    const later = await buildTestApp({}, () => new Date(Date.now() + 3601_000));
    try {
      const kids = (await request(later.app).get(`/oauth/jwks?platform_guid=${p.id}`).expect(200)).body.keys.map(
        (k: { kid: string }) => k.kid,
      );
      expect(kids).not.toContain(old);
      expect(kids).toHaveLength(1);
    } finally {
      await later.close();
    }
  });

  it('keeps platforms apart', async () => {
    const a = await buildPlatform(t.services);
    const b = await buildPlatform(t.services);
    const ka = (await jwks(a.id)).body.keys[0].kid;
    const kb = (await jwks(b.id)).body.keys[0].kid;
    expect(ka).not.toEqual(kb);
  });

  it('refuses an unknown platform', async () => {
    expectOAuthError(await jwks('00000000-0000-4000-8000-000000000000'), 400, 'invalid_request');
    expectOAuthError(await request(t.app).get('/oauth/jwks'), 400, 'invalid_request');
  });
});
