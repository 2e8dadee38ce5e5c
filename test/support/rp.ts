import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Express } from 'express';
import * as client from 'openid-client';
import { buildTestApp } from '../helpers';
import { buildClient, buildPlatform, buildUser, TEST_PASSWORD } from '../factories';
import { browser } from './browser';

/**
 * Relying-party test support: the provider on a real port whose BASE_URL is its own address
 * (the issuer must match the URLs it serves), and an unmodified openid-client configured from
 * the discovery document alone.
 */

export type TestApp = Awaited<ReturnType<typeof buildTestApp>>;
export type Method = 'client_secret_basic' | 'client_secret_post' | 'none';

export const REDIRECT_URI = 'https://rp.example/callback';

export interface Provider {
  base: string;
  t: TestApp;
  server: http.Server;
  close(): Promise<void>;
}

/** Listens on 127.0.0.1:<random>, then builds the app with BASE_URL = that address. */
export async function startProvider(env: Record<string, string> = {}): Promise<Provider> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const t = await buildTestApp({ BASE_URL: base, ...env });
  server.on('request', t.app);
  return {
    base,
    t,
    server,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await t.close();
    },
  };
}

/** The discovery URL a relying party is given: the full well-known URL with the platform. */
export const discoveryUrl = (base: string, platformId: string) =>
  new URL(`${base}/.well-known/openid-configuration?platform_guid=${encodeURIComponent(platformId)}`);

export function clientAuth(method: Method, secret: string | null): client.ClientAuth {
  if (method === 'none') return client.None();
  if (!secret) throw new Error(`${method} needs a client secret`);
  return method === 'client_secret_basic' ? client.ClientSecretBasic(secret) : client.ClientSecretPost(secret);
}

/** openid-client configured only from our discovery document. */
export function discover(base: string, platformId: string, clientId: string, method: Method, secret: string | null) {
  return client.discovery(
    discoveryUrl(base, platformId),
    clientId,
    { id_token_signed_response_alg: 'HS512' },
    clientAuth(method, secret),
    {
      execute: [client.allowInsecureRequests],
    },
  );
}

export interface Setup {
  platformId: string;
  clientId: string;
  secret: string | null;
  config: client.Configuration;
  user: Awaited<ReturnType<typeof buildUser>>;
}

/** A platform, a client (public for `none`), a user, and a discovered configuration. */
export async function setup(
  p: Provider,
  method: Method,
  opts: { clientScopes?: string; user?: Parameters<typeof buildUser>[2] } = {},
): Promise<Setup> {
  const platform = await buildPlatform(p.t.services);
  const c = await buildClient(p.t.services, platform.id, {
    type: method === 'none' ? 'public' : 'confidential',
    redirectUris: [REDIRECT_URI],
    ...(opts.clientScopes ? { scopes: opts.clientScopes } : {}),
  });
  const user = await buildUser(p.t.services, platform.id, opts.user);
  const config = await discover(p.base, platform.id, c.id, method, c.secret);
  return { platformId: platform.id, clientId: c.id, secret: c.secret, config, user };
}

export interface FlowResult {
  tokens: Awaited<ReturnType<typeof client.authorizationCodeGrant>>;
  redirect: URL;
  state: string;
  nonce: string;
  verifier: string;
}

/**
 * The whole authorization code flow as a standard RP runs it: authorization URL with state,
 * nonce and PKCE; the hosted sign-in and consent pages; then the code exchange with checks.
 */
export async function codeFlow(p: Provider, s: Setup, scope: string): Promise<FlowResult> {
  const verifier = client.randomPKCECodeVerifier();
  const state = client.randomState();
  const nonce = client.randomNonce();
  const url = client.buildAuthorizationUrl(s.config, {
    redirect_uri: REDIRECT_URI,
    scope,
    state,
    nonce,
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
  });
  if (url.origin !== p.base) throw new Error(`authorization endpoint ${url.origin} is not on ${p.base}`);
  const redirect = await signInAndConsent(p, url, s.user.email);
  const tokens = await client.authorizationCodeGrant(s.config, redirect, {
    pkceCodeVerifier: verifier,
    expectedState: state,
    expectedNonce: nonce,
  });
  return { tokens, redirect, state, nonce, verifier };
}

/** Drives the hosted pages in a fresh browser over the real port; returns the redirect to the RP. */
export async function signInAndConsent(p: Provider, authorizationUrl: URL, email: string): Promise<URL> {
  // supertest uses an already-listening server's own address.
  const b = browser(p.server as unknown as Express);
  let step = await b.get(authorizationUrl.pathname + authorizationUrl.search);
  if (b.pageTitle() !== 'Sign in')
    throw new Error(
      `expected the sign-in page, got ${step.res.status} ${b.pageTitle()}: ${step.res.text?.slice(0, 500)}`,
    );
  step = await b.submit('/signin', { email, password: TEST_PASSWORD });
  if (!step.location) step = await b.submit('/consent', { decision: 'allow' });
  if (!step.location) throw new Error(`no redirect to the client: ${step.res.status} ${b.pageTitle()}`);
  return new URL(step.location);
}

/** Decoded JWT parts, without verification. */
export function decodeJwt(jwt: string): { header: Record<string, unknown>; payload: Record<string, unknown> } {
  const [h, pl] = jwt.split('.');
  return {
    header: JSON.parse(Buffer.from(h, 'base64url').toString()),
    payload: JSON.parse(Buffer.from(pl, 'base64url').toString()),
  };
}
