import request from 'supertest';
import * as jose from 'jose';
import { buildTestApp } from '../helpers';
import { buildPlatform } from '../factories';
import { runCommand } from '../../src/cli/commands';
import { PUBLIC_JWK_MEMBERS } from '../../src/domain/signing-key';

// A `standard` platform's asymmetric keys and public JWKS (the tokens they sign: tokens.test.ts).
let t: Awaited<ReturnType<typeof buildTestApp>>;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(() => t.close());

const jwks = async (platformId: string) =>
  (await request(t.app).get(`/oauth/jwks?platform_guid=${platformId}`).expect(200)).body.keys as Array<
    Record<string, string>
  >;
const standardPlatform = async () =>
  (await t.services.platforms.createPlatform(`Standard ${Date.now()}`, undefined, 'standard')).platform;
const KTY_OF = { RS256: 'RSA', ES256: 'EC', EdDSA: 'OKP' } as const;

/** Only the public members of the key's kty, plus kid/use/alg: no d, p, q, dp, dq, qi, k, oth, key_ops, ext. */
function expectPublicOnly(key: Record<string, string>) {
  const allowed = [...PUBLIC_JWK_MEMBERS[key.kty], 'kid', 'use', 'alg'];
  for (const member of Object.keys(key)) expect(allowed).toContain(member);
  expect(key.kty).not.toBe('oct');
  expect(key.use).toBe('sig');
  expect(typeof key.kid).toBe('string');
}

describe('standard platform: keys and JWKS', () => {
  it('publishes exactly three public keys (RS256, ES256, EdDSA) with kid, use and alg, each importable', async () => {
    const p = await standardPlatform();
    const keys = await jwks(p.id);
    expect(keys.map((k) => k.alg).sort()).toEqual(['ES256', 'EdDSA', 'RS256']);
    for (const key of keys) {
      expectPublicOnly(key);
      expect(key.kty).toBe(KTY_OF[key.alg as keyof typeof KTY_OF]);
      await expect(jose.importJWK(key, key.alg)).resolves.toBeDefined();
    }
    expect(keys.find((k) => k.alg === 'EC' || k.kty === 'EC')!.crv).toBe('P-256');
    expect(keys.find((k) => k.kty === 'OKP')!.crv).toBe('Ed25519');
    expect(Buffer.from(keys.find((k) => k.kty === 'RSA')!.n, 'base64url').length * 8).toBe(2048);
  });

  it('a signature made with the active private key verifies against the published public key', async () => {
    const p = await standardPlatform();
    const published = await jwks(p.id);
    for (const alg of ['RS256', 'ES256', 'EdDSA'] as const) {
      const active = await t.services.signingKeys.activeAsymmetricKey(p.id, alg);
      const jws = await new jose.CompactSign(new TextEncoder().encode('test payload'))
        .setProtectedHeader({ alg, kid: active.kid })
        .sign(active.privateKey);
      const jwk = published.find((k) => k.kid === active.kid)!;
      expect(jwk.alg).toBe(alg);
      const { payload } = await jose.compactVerify(jws, await jose.importJWK(jwk, alg));
      expect(new TextDecoder().decode(payload)).toBe('test payload');
      // …and not against another algorithm's key
      const other = published.find((k) => k.alg !== alg)!;
      await expect(jose.compactVerify(jws, await jose.importJWK(other, other.alg))).rejects.toThrow();
    }
  });

  it('stores the private key sealed (no JWK member in clear) and the public key in clear', async () => {
    const p = await standardPlatform();
    const rows = await t.database.db('signing_keys').where({ platform_id: p.id }).whereNot({ alg: 'HS512' });
    expect(rows).toHaveLength(3);
    const published = await jwks(p.id);
    for (const row of rows) {
      expect(row.sealed_secret).toBeNull();
      expect(row.sealed_private_jwk).toEqual(expect.any(String));
      expect(row.sealed_private_jwk).not.toMatch(/"d"|"kty"|"x"/);
      const unsealed = JSON.parse(t.services.deps.sealer.unseal(row.sealed_private_jwk).toString('utf8'));
      expect(unsealed.d).toEqual(expect.any(String));
      expect(row.sealed_private_jwk).not.toContain(unsealed.d);
      const publicJwk = typeof row.public_jwk === 'string' ? JSON.parse(row.public_jwk) : row.public_jwk;
      expect(publicJwk.d).toBeUndefined();
      expect(published.find((k) => k.kid === row.kid)).toMatchObject(publicJwk);
    }
  });

  it('rotate --alg ES256 publishes the new kid next to the old one; the others are untouched', async () => {
    const p = await standardPlatform();
    const before = await jwks(p.id);
    const oldEs = before.find((k) => k.alg === 'ES256')!.kid;
    const rotated = await runCommand(t.services, ['key', 'rotate', '--platform', p.id, '--alg', 'ES256']);
    expect(rotated).toMatchObject({ platform_guid: p.id, alg: 'ES256', previous_kid: oldEs });
    const after = await jwks(p.id);
    expect(after.map((k) => k.kid)).toEqual(expect.arrayContaining([...before.map((k) => k.kid), rotated.kid]));
    expect(after).toHaveLength(4);
    // Published before it signs: the old key signs until the publication delay has passed.
    expect((await t.services.signingKeys.activeAsymmetricKey(p.id, 'ES256')).kid).toBe(oldEs);
    const listed = (await runCommand(t.services, ['key', 'list', '--platform', p.id])).items as Array<{
      kid: string;
      alg: string;
      status: string;
    }>;
    expect(listed.find((k) => k.kid === oldEs)).toMatchObject({ alg: 'ES256', status: 'active' });
    expect(listed.find((k) => k.kid === rotated.kid)).toMatchObject({ alg: 'ES256', status: 'next' });
    expect(
      listed
        .filter((k) => k.status === 'active')
        .map((k) => k.alg)
        .sort(),
    ).toEqual(['ES256', 'EdDSA', 'HS512', 'RS256']);
    // past the publication delay and then the access-token lifetime, the old key is no longer published
    const later = await buildTestApp(
      {},
      () => new Date(Date.now() + (t.config.signingKeyPublicationSeconds + 3601) * 1000),
    );
    try {
      const kids = (await request(later.app).get(`/oauth/jwks?platform_guid=${p.id}`).expect(200)).body.keys.map(
        (k: { kid: string }) => k.kid,
      );
      expect(kids).not.toContain(oldEs);
      expect(kids).toContain(rotated.kid);
      expect(kids).toHaveLength(3);
    } finally {
      await later.close();
    }
  });

  it('switching a seed platform to standard creates the three keys; its seed JWKS stays oct descriptors until then', async () => {
    const p = await buildPlatform(t.services);
    const seedKeys = await jwks(p.id);
    expect(seedKeys).toEqual([{ kty: 'oct', alg: 'HS512', use: 'sig', kid: expect.any(String) }]);
    await expect(runCommand(t.services, ['key', 'rotate', '--platform', p.id, '--alg', 'RS256'])).rejects.toThrow(
      /standard/,
    );
    const updated = await runCommand(t.services, ['platform', 'update', '--platform', p.id, '--profile', 'standard']);
    expect(updated.signing_profile).toBe('standard');
    const keys = await jwks(p.id);
    expect(keys.map((k) => k.alg).sort()).toEqual(['ES256', 'EdDSA', 'RS256']);
    keys.forEach(expectPublicOnly);
    // back to seed: the spec's JWKS again, byte for byte as before
    await runCommand(t.services, ['platform', 'update', '--platform', p.id, '--profile', 'seed']);
    expect(await jwks(p.id)).toEqual(seedKeys);
    // and to standard again: the same keys, none added
    await runCommand(t.services, ['platform', 'update', '--platform', p.id, '--profile', 'standard']);
    expect((await jwks(p.id)).map((k) => k.kid).sort()).toEqual(keys.map((k) => k.kid).sort());
  });
});
