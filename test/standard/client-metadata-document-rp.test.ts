import request from 'supertest';
import type { Express } from 'express';
import * as client from 'openid-client';
import { buildClient, buildPlatform, buildStandardPlatform, buildUser, TEST_PASSWORD } from '../factories';
import { browser } from '../support/browser';
import { json, startDocumentServer } from '../support/document-server';
import { decodeJwt, REDIRECT_URI, startProvider, type Provider } from '../support/rp';
import { cliActor } from '../../src/domain/admin';
import type { Platform } from '../../src/domain/platform';

// docs/decisions.md, "Agent-ready authorization": a client named by the URL of its Client ID
// Metadata Document, served over https by a local server whose CA the provider trusts through
// OUTBOUND_CA_FILE. An unmodified openid-client uses the URL as its client_id for the whole flow;
// the provider stores one row per (platform, URL) under a UUID and answers with the URL everywhere.
let p: Provider;
let docs: Awaited<ReturnType<typeof startDocumentServer>>;
beforeAll(async () => {
  docs = await startDocumentServer();
  p = await startProvider({ OUTBOUND_CA_FILE: docs.caFile });
});
afterAll(async () => {
  await p.close();
  await docs.close();
});

const CHALLENGE = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';
const text = (html: string) =>
  html
    .replace(/<[^>]+>/g, ' ')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ');

async function documentPlatform(policy: string): Promise<Platform> {
  const { id } = await buildStandardPlatform(p.t.services);
  if (policy !== 'off')
    await p.t.services.admin.platforms.update(cliActor(), id, { client_metadata_documents: policy });
  return (await p.t.services.platforms.findPlatform(id))!;
}

const agentDocument = (url: string) => ({
  client_id: url,
  client_name: 'Document Agent',
  redirect_uris: [REDIRECT_URI],
  post_logout_redirect_uris: ['https://rp.example/signed-out'],
  grant_types: ['authorization_code', 'refresh_token'],
  token_endpoint_auth_method: 'none',
  client_uri: 'https://agent.example/',
});

function publishAgent() {
  const doc = docs.publish((req, res) => json(agentDocument(doc.url))(req, res));
  return doc;
}

const storedRows = (platformId: string, url: string) =>
  p.t.database.db('clients').where({ platform_id: platformId, metadata_document_url: url });

const authorizePath = (platformId: string, clientId: string) =>
  `/oauth/authorize?${new URLSearchParams({ platform_guid: platformId, response_type: 'code', client_id: clientId, redirect_uri: REDIRECT_URI, scope: 'openid', state: 's', code_challenge: CHALLENGE, code_challenge_method: 'S256' })}`;

async function introspect(issuer: string, rs: { id: string; secret: string | null }, token: string) {
  const basic = Buffer.from(`${encodeURIComponent(rs.id)}:${encodeURIComponent(rs.secret!)}`).toString('base64');
  const res = await fetch(`${issuer}/oauth/introspect`, {
    method: 'POST',
    headers: { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token }),
  });
  return res.json();
}

it('openid-client with the document URL as client_id: consent marks the app as self-registered; ID token, access token and introspection name the URL', async () => {
  const platform = await documentPlatform('on');
  const user = await buildUser(p.t.services, platform.id);
  const doc = publishAgent();
  const issuer = `${p.base}/platforms/${platform.id}`;
  const config = await client.discovery(new URL(issuer), doc.url, undefined, client.None(), {
    execute: [client.allowInsecureRequests],
  });
  expect(config.serverMetadata().client_id_metadata_document_supported).toBe(true);

  const verifier = client.randomPKCECodeVerifier();
  const state = client.randomState();
  const nonce = client.randomNonce();
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: REDIRECT_URI,
    scope: 'openid email offline_access',
    state,
    nonce,
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
  });
  expect(url.searchParams.get('client_id')).toBe(doc.url);
  const b = browser(p.server as unknown as Express);
  await b.get(url.pathname + url.search);
  expect(b.pageTitle()).toBe('Sign in');
  await b.submit('/signin', { email: user.email, password: TEST_PASSWORD });
  expect(b.pageTitle()).toBe('Document Agent wants to access your account');
  expect(text(b.html)).toContain('This app registered itself.');
  const step = await b.submit('/consent', { decision: 'allow' });
  const tokens = await client.authorizationCodeGrant(config, new URL(step.location!), {
    pkceCodeVerifier: verifier,
    expectedState: state,
    expectedNonce: nonce,
  });

  expect(tokens.claims()).toMatchObject({ iss: issuer, sub: user.id, aud: doc.url, azp: doc.url });
  expect(decodeJwt(tokens.access_token).payload).toMatchObject({ client_id: doc.url, aud: doc.url });
  const [row, ...others] = await storedRows(platform.id, doc.url);
  expect(others).toEqual([]);
  expect(row).toMatchObject({ registration_source: 'metadata_document', type: 'public', name: 'Document Agent' });
  expect(row.id).toMatch(/^[0-9a-f-]{36}$/);
  expect(row.last_used_at).not.toBeNull(); // in use: not a candidate for the purge

  const rs = await buildClient(p.t.services, platform.id, { isResourceServer: true });
  expect(await introspect(issuer, rs, tokens.access_token)).toMatchObject({ active: true, client_id: doc.url });
  const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!);
  expect(refreshed.claims()).toMatchObject({ aud: doc.url, azp: doc.url });
  expect(await introspect(issuer, rs, refreshed.refresh_token!)).toMatchObject({ active: true, client_id: doc.url });
  expect(doc.fetches()).toBe(1); // kept by its cache headers (none: the default hour)

  // RP-initiated logout: the URL as client_id and as the hint's audience; the stored row's redirect.
  const logout = client.buildEndSessionUrl(config, {
    id_token_hint: refreshed.id_token!,
    post_logout_redirect_uri: 'https://rp.example/signed-out',
    state: 'bye',
  });
  expect(logout.searchParams.get('client_id')).toBe(doc.url);
  const res = await fetch(logout, { redirect: 'manual' });
  expect(res.status).toBe(302);
  expect(res.headers.get('location')).toBe('https://rp.example/signed-out?state=bye');
});

it('a document that changes is stored again on its next fetch, under the same id', async () => {
  const platform = await documentPlatform('on');
  let name = 'First Name';
  const doc = docs.publish((req, res) =>
    json({ ...agentDocument(doc.url), client_name: name }, { 'cache-control': 'no-store' })(req, res),
  );
  const s = p.t.services.clientMetadataDocuments;
  const first = await s.storedClient(platform, doc.url);
  // A consent remembered for the first name is not one for the second (docs/decisions.md).
  const user = await buildUser(p.t.services, platform.id);
  const db = p.t.database.db;
  await db('consents').insert({ platform_id: platform.id, user_id: user.id, client_id: first.id, scopes: ['openid'] });
  expect(await s.storedClient(platform, doc.url)).toMatchObject({ id: first.id, name: 'First Name' });
  expect(await db('consents').where({ client_id: first.id })).toHaveLength(1);
  name = 'Second Name';
  const second = await s.storedClient(platform, doc.url);
  expect(second).toMatchObject({ id: first.id, name: 'Second Name', metadataDocumentUrl: doc.url });
  expect(await storedRows(platform.id, doc.url)).toHaveLength(1);
  expect(await db('consents').where({ client_id: first.id })).toHaveLength(0);
});

describe('a URL client_id the platform does not look up is an unknown client; a bad document is an error page', () => {
  const unknownApp = 'The application that sent you here is not registered with this sign-in service.';

  it.each([
    ['the policy is off', () => documentPlatform('off')],
    ['the host is not allowed', () => documentPlatform('agent.example.com')],
    ['a seed platform', () => buildPlatform(p.t.services)],
  ])('%s: the unknown-application page, nothing fetched or stored', async (_case, platformOf) => {
    const platform = await platformOf();
    const doc = publishAgent();
    const res = await request(p.t.app).get(authorizePath(platform.id, doc.url));
    expect(res.status).toBe(400);
    expect(res.headers.location).toBeUndefined();
    expect(res.text).toContain(unknownApp);
    const token = await request(p.t.app)
      .post(`/oauth/token?platform_guid=${platform.id}`)
      .type('form')
      .send({ grant_type: 'authorization_code', code: 'x', redirect_uri: REDIRECT_URI, client_id: doc.url });
    expect(token.status).toBe(401);
    expect(token.body).toMatchObject({ error: 'invalid_client', error_description: 'Unknown client' });
    expect(doc.fetches()).toBe(0);
    expect(await storedRows(platform.id, doc.url)).toEqual([]);
  });

  it('a document whose client_id is another URL: the error page with the reason, never a redirect; nothing stored', async () => {
    const platform = await documentPlatform('on');
    const doc = docs.publish(json({ ...agentDocument('https://elsewhere.example/client.json') }));
    const res = await request(p.t.app).get(authorizePath(platform.id, doc.url));
    expect(res.status).toBe(400);
    expect(res.headers.location).toBeUndefined();
    expect(text(res.text)).toContain('is not the URL the document was fetched from');
    expect(await storedRows(platform.id, doc.url)).toEqual([]);
    // Audited with who asked: the browser's address and user agent, not the system's.
    const [event] = (await p.t.services.audit.list({ platformId: platform.id, kind: 'client_metadata.refused' }, 1))
      .events;
    expect(event).toMatchObject({ actorType: 'anonymous', source: expect.stringMatching(/127\.0\.0\.1|::1/) });
  });
});

describe('discovery', () => {
  const documents = async (platformId: string) => {
    const issuer = `/platforms/${platformId}`;
    return Promise.all(
      [
        `/.well-known/openid-configuration?platform_guid=${platformId}`,
        `${issuer}/.well-known/openid-configuration`,
        `/.well-known/oauth-authorization-server${issuer}`,
      ].map(async (path) => (await request(p.t.app).get(path).expect(200)).body),
    );
  };

  it('a standard platform whose policy accepts documents says so in both documents; off, it says nothing', async () => {
    const platform = await documentPlatform('*.agent.example');
    for (const doc of await documents(platform.id)) expect(doc.client_id_metadata_document_supported).toBe(true);
    await p.t.services.admin.platforms.update(cliActor(), platform.id, { client_metadata_documents: 'off' });
    for (const doc of await documents(platform.id))
      expect(doc).not.toHaveProperty('client_id_metadata_document_supported');
  });

  it('a seed platform: no such member', async () => {
    const platform = await buildPlatform(p.t.services);
    const res = await request(p.t.app).get(`/.well-known/openid-configuration?platform_guid=${platform.id}`);
    expect(res.body).not.toHaveProperty('client_id_metadata_document_supported');
  });
});
