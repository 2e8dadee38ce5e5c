import http from 'node:http';
import { createHash } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { Express } from 'express';
import request from 'supertest';
import * as jose from 'jose';
import { buildTestApp } from '../helpers';
import { buildClient, buildUser, TEST_PASSWORD } from '../factories';
import { browser, type Browser } from './browser';

/**
 * Support for the conformance tests of a `standard` platform (test/standard/conformance-*.test.ts):
 * the provider on a real port with a clock the test moves, and a relying party that knows only the
 * issuer — it reads discovery from `{issuer}/.well-known/openid-configuration`, the JWKS from the
 * document's `jwks_uri`, and verifies every signature against that JWKS, never trusting a token.
 */

export const REDIRECT_URI = 'https://rp.example/callback';

export interface ClockedProvider {
  base: string;
  t: Awaited<ReturnType<typeof buildTestApp>>;
  server: http.Server;
  now(): Date;
  /** Moves the provider's clock (and the one the checks use) forward. */
  tick(seconds: number): void;
  close(): Promise<void>;
}

/** Listens on 127.0.0.1:<random> and builds the app with BASE_URL = that address and a movable clock. */
export async function startClockedProvider(): Promise<ClockedProvider> {
  let clock = Date.now();
  const now = () => new Date(clock);
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const t = await buildTestApp({ BASE_URL: base }, now);
  server.on('request', t.app);
  return {
    base,
    t,
    server,
    now,
    tick(seconds) {
      clock += seconds * 1000;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await t.close();
    },
  };
}

export type Discovery = Record<string, unknown> & {
  issuer: string;
  authorization_endpoint: string;
  token_endpoint: string;
  userinfo_endpoint: string;
  jwks_uri: string;
  introspection_endpoint: string;
  revocation_endpoint: string;
};
export type Jwk = Record<string, string>;

/** supertest on an absolute URL of the listening provider. */
export const api = (p: ClockedProvider) => request(p.server as unknown as Express);
export const pathOf = (url: string) => {
  const u = new URL(url);
  return `${u.pathname}${u.search}`;
};

export interface StandardOp {
  platformId: string;
  issuer: string;
  discovery: Discovery;
  jwks: Jwk[];
}

/** A new standard platform, its discovery document fetched from the issuer, and its JWKS from jwks_uri. */
export async function standardOp(p: ClockedProvider): Promise<StandardOp> {
  const { platform } = await p.t.services.platforms.createPlatform(
    `Conformance ${Math.random().toString(36).slice(2, 8)}`,
    undefined,
    'standard',
  );
  const issuer = `${p.base}/platforms/${platform.id}`;
  const discovery = (
    await api(p)
      .get(pathOf(`${issuer}/.well-known/openid-configuration`))
      .expect(200)
  ).body as Discovery;
  return { platformId: platform.id, issuer, discovery, jwks: await fetchJwks(p, discovery) };
}

export async function fetchJwks(p: ClockedProvider, discovery: Discovery): Promise<Jwk[]> {
  return (await api(p).get(pathOf(discovery.jwks_uri)).expect(200)).body.keys as Jwk[];
}

export type TestClient = Awaited<ReturnType<typeof buildClient>>;
export type TestUser = Awaited<ReturnType<typeof buildUser>>;

export const ADDRESS = {
  formatted: '12 St James Square\nLondon SW1Y 4JH\nGB',
  street_address: '12 St James Square',
  locality: 'London',
  region: 'London',
  postal_code: 'SW1Y 4JH',
  country: 'GB',
};
export const PHONE = '+14155552671';

/** A client of the platform (confidential unless told) and a user with every scope-gated claim set. */
export async function clientAndUser(p: ClockedProvider, op: StandardOp, input: Parameters<typeof buildClient>[2] = {}) {
  const client = await buildClient(p.t.services, op.platformId, { redirectUris: [REDIRECT_URI], ...input });
  const user = await buildUser(p.t.services, op.platformId, { phoneNumber: PHONE });
  // address has no factory field: set in the store, as test/rp/claims.test.ts does
  await p.t.database
    .db('users')
    .where({ id: user.id })
    .update({ address: JSON.stringify(ADDRESS) });
  return { client, user };
}

/** The authorization endpoint from discovery with the request's parameters added. */
export function authorizeUrl(op: StandardOp, client: TestClient, extra: Record<string, string> = {}): URL {
  const url = new URL(op.discovery.authorization_endpoint);
  const params = {
    response_type: 'code',
    client_id: client.id,
    redirect_uri: REDIRECT_URI,
    scope: 'openid',
    state: 'st-1',
    nonce: 'n-1',
    ...extra,
  };
  for (const [k, v] of Object.entries(params)) if (v !== '') url.searchParams.set(k, v);
  return url;
}

export interface Driven {
  /** The redirect to the client. */
  callback: URL;
  /** The hosted pages shown on the way, by title. */
  pages: string[];
}

/**
 * Follows an authorization through the hosted pages as a user would: picks the account on the
 * chooser, signs in when asked, allows consent. Records which pages were shown.
 */
export async function drive(b: Browser, start: { location?: string }, user: TestUser): Promise<Driven> {
  const pages: string[] = [];
  let step = start;
  for (let i = 0; i < 6 && !step.location; i++) {
    const title = b.pageTitle() ?? '';
    pages.push(title);
    if (title === 'Choose an account') step = await b.submit('/chooser', { account: user.id });
    else if (title === 'Sign in') step = await b.submit('/signin', { email: user.email, password: TEST_PASSWORD });
    else if (title.includes('wants to access')) step = await b.submit('/consent', { decision: 'allow' });
    else throw new Error(`unexpected page "${title}":\n${b.html.slice(0, 2000)}`);
  }
  if (!step.location) throw new Error(`no redirect to the client after ${pages.join(' → ')}`);
  return { callback: new URL(step.location), pages };
}

/** GET the authorization URL in the browser and drive it to the callback. */
export async function authorize(b: Browser, url: URL, user: TestUser): Promise<Driven> {
  return drive(b, await b.get(pathOf(url.toString())), user);
}

export const basicAuth = (c: Pick<TestClient, 'id' | 'secret'>) =>
  `Basic ${Buffer.from(`${encodeURIComponent(c.id)}:${encodeURIComponent(c.secret!)}`).toString('base64')}`;

export interface TokenResponse {
  access_token: string;
  token_type: string;
  expires_in: number;
  scope: string;
  id_token?: string;
  refresh_token?: string;
}

/** The code exchange at the discovered token endpoint (client_secret_basic unless told). */
export function exchangeCode(
  p: ClockedProvider,
  op: StandardOp,
  client: TestClient,
  code: string | null,
  opts: { method?: 'basic' | 'post'; extra?: Record<string, string> } = {},
) {
  const body: Record<string, string> = {
    grant_type: 'authorization_code',
    code: code ?? '',
    redirect_uri: REDIRECT_URI,
    ...opts.extra,
  };
  const req = api(p).post(pathOf(op.discovery.token_endpoint)).type('form');
  if (opts.method === 'post') return req.send({ ...body, client_id: client.id, client_secret: client.secret! });
  return req.set('Authorization', basicAuth(client)).send(body);
}

/** Authorization code flow through the pages, then the exchange; fails unless the exchange is a 200. */
export async function codeFlow(
  p: ClockedProvider,
  op: StandardOp,
  b: Browser,
  client: TestClient,
  user: TestUser,
  extra: Record<string, string> = {},
) {
  const driven = await authorize(b, authorizeUrl(op, client, extra), user);
  const code = driven.callback.searchParams.get('code');
  if (!code) throw new Error(`no code: ${driven.callback}`);
  const res = await exchangeCode(p, op, client, code);
  if (res.status !== 200) throw new Error(`token exchange: ${res.status} ${res.text}`);
  return { ...driven, code, tokens: res.body as TokenResponse };
}

/**
 * Verifies a JWT against the published JWKS only: the header's kid must name a published key whose
 * alg is the expected one, and the signature must verify with that key.
 */
export async function verifyWithJwks(
  p: ClockedProvider,
  jwt: string,
  jwks: Jwk[],
  expected: { alg: string; issuer: string; audience: string },
) {
  const header = jose.decodeProtectedHeader(jwt);
  if (header.alg !== expected.alg) throw new Error(`alg ${header.alg}, expected ${expected.alg}`);
  const key = jwks.find((k) => k.kid === header.kid);
  if (!key) throw new Error(`kid ${String(header.kid)} is not in the JWKS`);
  if (key.alg !== expected.alg) throw new Error(`key ${key.kid} is for ${key.alg}`);
  const { payload, protectedHeader } = await jose.jwtVerify(jwt, jose.createLocalJWKSet({ keys: jwks }), {
    algorithms: [expected.alg],
    issuer: expected.issuer,
    audience: expected.audience,
    currentDate: p.now(),
  });
  return { payload, header: protectedHeader };
}

/** OIDC Core 3.1.3.6: base64url of the left half of the hash of the token's ASCII octets (SHA-256 for RS256/ES256). */
export const leftHalfSha256 = (value: string) =>
  createHash('sha256').update(value, 'ascii').digest().subarray(0, 16).toString('base64url');

/** UserInfo with the token in the header (GET or POST). */
export function userinfo(p: ClockedProvider, op: StandardOp, accessToken: string, method: 'get' | 'post' = 'get') {
  const path = pathOf(op.discovery.userinfo_endpoint);
  return (method === 'get' ? api(p).get(path) : api(p).post(path).type('form').send({})).set(
    'Authorization',
    `Bearer ${accessToken}`,
  );
}

export function introspect(p: ClockedProvider, op: StandardOp, client: TestClient, token: string) {
  return api(p)
    .post(pathOf(op.discovery.introspection_endpoint))
    .set('Authorization', basicAuth(client))
    .type('form')
    .send({ token });
}

export function newBrowser(p: ClockedProvider): Browser {
  return browser(p.server as unknown as Express);
}
