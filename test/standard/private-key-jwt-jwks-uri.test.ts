import request from 'supertest';
import { decodeJwt } from 'jose';
import { buildTestApp, expectOAuthError } from '../helpers';
import { buildClient, buildStandardPlatform } from '../factories';
import { json, startDocumentServer, type Handler } from '../support/document-server';
import { JWT_BEARER, assertionClaims, clientKey, jwksOf, signAssertion, type ClientKey } from '../support/client-keys';

// docs/decisions.md, "Machine and device clients": a client's keys at its jwks_uri, served over https
// by a local server whose CA the provider trusts through OUTBOUND_CA_FILE (the outbound guard allows
// loopback targets outside production). The provider's clock is the test's: the cache and the
// refetch interval follow it. Two instances share the database: a jti is spent for both.
const BASE = 'http://issuer.test';
let docs: Awaited<ReturnType<typeof startDocumentServer>>;
let t: Awaited<ReturnType<typeof buildTestApp>>;
let t2: Awaited<ReturnType<typeof buildTestApp>>;
let at = Date.now();
const now = () => new Date(at);
const advance = (seconds: number) => (at += seconds * 1000);

beforeAll(async () => {
  docs = await startDocumentServer();
  t = await buildTestApp({ BASE_URL: BASE, OUTBOUND_CA_FILE: docs.caFile }, now);
  t2 = await buildTestApp({ BASE_URL: BASE, OUTBOUND_CA_FILE: docs.caFile }, now);
});
afterAll(async () => {
  await t.close();
  await t2.close();
  await docs.close();
});

/** A jwks_uri whose answer the test changes as it goes. */
function jwksEndpoint(initial: Handler) {
  let handler = initial;
  const endpoint = docs.publish((req, res) => handler(req, res));
  return { ...endpoint, serve: (next: Handler) => (handler = next) };
}

async function clientAt(uri: string) {
  const p = await buildStandardPlatform(t.services);
  const c = await buildClient(t.services, p.id, { jwksUri: uri });
  return { p, c, issuer: `${BASE}/platforms/${p.id}` };
}

type AtUri = Awaited<ReturnType<typeof clientAt>>;

const assertion = (k: AtUri, key: ClientKey, overrides: Record<string, unknown> = {}) =>
  signAssertion(key, assertionClaims(k.c.id, k.issuer, Math.floor(at / 1000), overrides));

/** A token request whose made-up code is refused once the client has authenticated (invalid_grant). */
const tokenWith = (app: typeof t, k: AtUri, clientAssertion: string) =>
  request(app.app).post(`/platforms/${k.p.id}/oauth/token`).type('form').send({
    grant_type: 'authorization_code',
    code: 'none-such',
    redirect_uri: k.c.redirectUris[0],
    client_assertion_type: JWT_BEARER,
    client_assertion: clientAssertion,
  });

const expectAuthenticated = (res: request.Response) =>
  expect({ status: res.status, error: res.body.error }).toEqual({ status: 400, error: 'invalid_grant' });

const expectRefused = (res: request.Response, reason: RegExp) => {
  expectOAuthError(res, 401, 'invalid_client');
  expect(res.body.error_description).toMatch(reason);
};

describe('private_key_jwt with jwks_uri', () => {
  it('fetches the set through the outbound guard once, then answers from the cache', async () => {
    const key = await clientKey('ES256');
    let accept: string | undefined;
    const uri = jwksEndpoint((req, res) => {
      accept = req.headers.accept;
      json(jwksOf(key))(req, res);
    });
    const k = await clientAt(uri.url);
    expectAuthenticated(await tokenWith(t, k, await assertion(k, key)));
    expectAuthenticated(await tokenWith(t, k, await assertion(k, key)));
    expect(uri.fetches()).toBe(1);
    expect(accept).toMatch(/application\/jwk-set\+json/);
  });

  it('keeps a set for its max-age (within bounds) and fetches it again after', async () => {
    const key = await clientKey();
    const uri = jwksEndpoint(json(jwksOf(key), { 'cache-control': 'max-age=600' }));
    const k = await clientAt(uri.url);
    expectAuthenticated(await tokenWith(t, k, await assertion(k, key)));
    advance(590);
    expectAuthenticated(await tokenWith(t, k, await assertion(k, key)));
    expect(uri.fetches()).toBe(1);
    advance(20);
    expectAuthenticated(await tokenWith(t, k, await assertion(k, key)));
    expect(uri.fetches()).toBe(2);
  });

  it('an unknown kid fetches the set again and finds the rotated key, at most once a minute per URI', async () => {
    const [a, b, c] = await Promise.all([clientKey(), clientKey(), clientKey('PS256')]);
    const uri = jwksEndpoint(json(jwksOf(a)));
    const k = await clientAt(uri.url);
    expectAuthenticated(await tokenWith(t, k, await assertion(k, a)));
    expect(uri.fetches()).toBe(1);

    advance(61);
    uri.serve(json(jwksOf(b))); // the client rotated: a is gone, b is new
    expectAuthenticated(await tokenWith(t, k, await assertion(k, b)));
    expect(uri.fetches()).toBe(2);
    expectRefused(await tokenWith(t, k, await assertion(k, a)), /none of the client's keys has kid/);

    // A second rotation within the minute is not looked for: unknown kids cannot make us fetch on every request.
    uri.serve(json(jwksOf(b, c)));
    for (let i = 0; i < 3; i++)
      expectRefused(await tokenWith(t, k, await assertion(k, c)), /none of the client's keys has kid/);
    expect(uri.fetches()).toBe(2);
    advance(61);
    expectAuthenticated(await tokenWith(t, k, await assertion(k, c)));
    expect(uri.fetches()).toBe(3);
  });

  it('a changed jwks_uri is used at once: the admin change forgets the cached set', async () => {
    const [a, b] = await Promise.all([clientKey(), clientKey()]);
    const first = jwksEndpoint(json(jwksOf(a)));
    const second = jwksEndpoint(json(jwksOf(b)));
    const k = await clientAt(first.url);
    expectAuthenticated(await tokenWith(t, k, await assertion(k, a)));
    await t.database.db('clients').where({ id: k.c.id }).update({ jwks_uri: second.url });
    t.services.clientAuth.forget(k.c.id); // as the admin services do after a client update
    expectAuthenticated(await tokenWith(t, k, await assertion(k, b)));
    expectRefused(await tokenWith(t, k, await assertion(k, a)), /none of the client's keys has kid/);
    expect(second.fetches()).toBe(1);
  });

  it.each([
    ['answers 500', ((_q, r) => r.writeHead(500).end()) as Handler, /answered 500, not 200/],
    [
      'answers a redirect',
      ((_q, r) => r.writeHead(302, { location: 'https://elsewhere.example/' }).end()) as Handler,
      /redirect, which is not followed/,
    ],
    [
      'answers invalid JSON',
      ((_q, r) => r.writeHead(200, { 'content-type': 'application/json' }).end('{"keys": [')) as Handler,
      /not valid JSON/,
    ],
    ['answers JSON that is not a JWK Set', json({ issuer: 'https://x.example' }), /not a JWK Set/],
    ['answers more than 64 KB', json({ keys: [], padding: 'x'.repeat(70 * 1024) }), /larger than 65536 bytes/],
    [
      'publishes a private key',
      json({ keys: [{ kty: 'EC', crv: 'P-256', x: 'x', y: 'y', d: 'd' }] }),
      /private or symmetric key material/,
    ],
  ] as const)(
    'a jwks_uri that %s: invalid_client with the reason, audited, then backed off',
    async (_what, handler, reason) => {
      const key = await clientKey();
      const uri = jwksEndpoint(handler);
      const k = await clientAt(uri.url);
      expectRefused(await tokenWith(t, k, await assertion(k, key)), reason);
      expect(uri.fetches()).toBe(1);
      // Within the back-off the same answer without a fetch.
      expectRefused(await tokenWith(t, k, await assertion(k, key)), /on a fetch less than 60 s ago/);
      expect(uri.fetches()).toBe(1);
      const { events } = await t.services.audit.list({ platformId: k.p.id }, 10);
      expect(events.map((e) => ({ kind: e.kind, clientId: e.clientId, details: e.details }))).toEqual([
        {
          kind: 'client.jwks_fetch_failed',
          clientId: k.c.id,
          details: { host: new URL(uri.url).host, reason: expect.stringMatching(reason) },
        },
      ]);
      // Fixed: after the back-off the set is fetched again.
      uri.serve(json(jwksOf(key)));
      advance(61);
      expectAuthenticated(await tokenWith(t, k, await assertion(k, key)));
    },
  );

  it('an unreachable jwks_uri is invalid_client, not a 5xx', async () => {
    const key = await clientKey();
    const k = await clientAt('http://127.0.0.1:1/jwks.json');
    expectRefused(
      await tokenWith(t, k, await assertion(k, key)),
      /jwks_uri \(127\.0\.0\.1:1\) cannot be used: 127\.0\.0\.1:1: ECONNREFUSED/,
    );
  });

  it('a garbage assertion fetches nothing', async () => {
    const key = await clientKey();
    const uri = jwksEndpoint(json(jwksOf(key)));
    const k = await clientAt(uri.url);
    expectRefused(await tokenWith(t, k, 'not-a-jwt'), /not a signed JWT/);
    expectRefused(await tokenWith(t, k, await assertion(k, key, { aud: 'https://elsewhere.example' })), /aud must be/);
    expect(uri.fetches()).toBe(0);
  });
});

describe('single use across instances', () => {
  it('an assertion accepted by one instance is a replay at the other', async () => {
    const key = await clientKey('EdDSA');
    const uri = jwksEndpoint(json(jwksOf(key)));
    const k = await clientAt(uri.url);
    const once = await assertion(k, key);
    expectAuthenticated(await tokenWith(t, k, once));
    expectRefused(await tokenWith(t2, k, once), /jti was used already/);
    expect(decodeJwt(once).jti).toEqual(expect.any(String));
  });

  it('of concurrent uses on both instances, exactly one is accepted', async () => {
    const key = await clientKey();
    const uri = jwksEndpoint(json(jwksOf(key)));
    const k = await clientAt(uri.url);
    // Both instances have the set already, so the race is the jti's alone.
    expectAuthenticated(await tokenWith(t, k, await assertion(k, key)));
    expectAuthenticated(await tokenWith(t2, k, await assertion(k, key)));
    const once = await assertion(k, key);
    const answers = await Promise.all([t, t2, t, t2, t, t2].map((app) => tokenWith(app, k, once)));
    expect(answers.map((r) => r.status).sort()).toEqual([400, 401, 401, 401, 401, 401]);
    for (const r of answers.filter((a) => a.status === 401))
      expect(r.body.error_description).toMatch(/jti was used already/);
  });
});
