// An unmodified MCP client (the MCP TypeScript SDK) calls a tool of an MCP server that trusts
// Latchkey: the SDK finds the authorization server from the server's RFC 9728 metadata, registers
// itself (RFC 7591), sends the person to sign in and consent in Chromium with PKCE and an RFC 8707
// resource, exchanges the code, and calls the tool with an RFC 9068 access token the server
// verifies against the platform's JWKS and its own URL as `aud`. The same with a client that does
// not register: its client_id is the https URL of its Client ID Metadata Document, served by the test.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { createMcpApp } from '../examples/mcp-server/server';
import { InMemoryOAuthClient } from '../test/support/mcp-client';
import { buildStandardPlatform, buildUser } from '../test/factories';
import { cliActor } from '../src/domain/admin';
import { allow, callbackParams, expectPage, isCallback, signIn, startHarness, type Harness } from './support/harness';
import { expectAxeClean } from './support/page-checks';
import { shoot } from './support/upstreams';
import { json, startDocumentServer } from '../test/support/document-server';

jest.setTimeout(90_000);

let h: Harness;
let mcp: http.Server;
let mcpUrl: string;
let platformId: string;
let docs: Awaited<ReturnType<typeof startDocumentServer>>;

beforeAll(async () => {
  docs = await startDocumentServer();
  h = await startHarness({ env: { OUTBOUND_CA_FILE: docs.caFile } });
  platformId = (await buildStandardPlatform(h.t.services, 'Agents')).id;
  await h.t.services.admin.platforms.update(cliActor(), platformId, {
    registration: 'open',
    client_metadata_documents: 'on',
  });
  mcp = http.createServer();
  await new Promise<void>((resolve) => mcp.listen(0, '127.0.0.1', resolve));
  mcpUrl = `http://127.0.0.1:${(mcp.address() as AddressInfo).port}/mcp`;
  await h.t.services.resources.create(platformId, {
    uri: mcpUrl,
    name: 'Example MCP server',
    scopes: [{ name: 'mcp:tools', description: 'Call the tools of the example server' }],
  });
  const app = await createMcpApp({
    issuer: `${h.base}/platforms/${platformId}`,
    mcpUrl,
    requiredScopes: ['mcp:tools'],
  });
  mcp.on('request', app);
});
afterAll(async () => {
  mcp?.closeAllConnections();
  await new Promise<void>((resolve) => (mcp ? mcp.close(() => resolve()) : resolve()));
  await h?.close();
  await docs?.close();
});

/** Signs the person in at the authorization URL the SDK was given, allows, and finishes the SDK's authorization. */
async function signInAndAllow(authorizationUrl: URL, email: string, transport: StreamableHTTPClientTransport) {
  const context = await h.browser.newContext({ viewport: { width: 1280, height: 800 }, deviceScaleFactor: 1 });
  const page = await context.newPage();
  try {
    await page.goto(authorizationUrl.href);
    await signIn(page, email);
    await expectPage(page, 'consent');
    const main = await page.locator('main').innerText();
    await allow(page);
    expect(isCallback(page)).toBe(true);
    await transport.finishAuth(callbackParams(page).get('code')!);
    return main;
  } finally {
    await context.close();
  }
}

async function connect(provider: InMemoryOAuthClient) {
  const client = new Client({ name: 'latchkey-e2e-agent', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider: provider }));
  return client;
}

it('registers itself, signs the person in with consent, and calls a tool with an access token for the MCP server', async () => {
  const user = await buildUser(h.t.services, platformId);
  const provider = new InMemoryOAuthClient({ redirectUrl: `${h.base}/__rp/callback`, clientName: 'Example agent' });

  // First contact: 401 from the MCP server, discovery, registration, then the SDK hands over the authorization URL.
  const transport = new StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider: provider });
  await expect(new Client({ name: 'latchkey-e2e-agent', version: '1.0.0' }).connect(transport)).rejects.toThrow(
    UnauthorizedError,
  );
  expect(provider.registered?.client_id).toEqual(expect.any(String));
  const authorizationUrl = provider.authorizationUrl!;
  expect(authorizationUrl.href.startsWith(`${h.base}/platforms/${platformId}/oauth/authorize?`)).toBe(true);
  expect(authorizationUrl.searchParams.get('resource')).toBe(mcpUrl);
  expect(authorizationUrl.searchParams.get('code_challenge_method')).toBe('S256');

  // bypassCSP only so that the test can inject axe-core; the page's own CSP is tested elsewhere.
  const context = await h.browser.newContext({
    viewport: { width: 1280, height: 800 },
    deviceScaleFactor: 1,
    bypassCSP: true,
  });
  const page = await context.newPage();
  try {
    await page.goto(authorizationUrl.href);
    await signIn(page, user.email);
    await expectPage(page, 'consent');
    await expect(page.locator('main').innerText()).resolves.toContain('Example MCP server');
    await expect(page.locator('main').innerText()).resolves.toContain('Call the tools of the example server');
    await expectAxeClean(page);
    await shoot(page, 'consent-mcp-agent');
    await allow(page);
    expect(isCallback(page)).toBe(true);
    await transport.finishAuth(callbackParams(page).get('code')!);
  } finally {
    await context.close();
  }

  const client = await connect(provider);
  const result = await client.callTool({ name: 'whoami' });
  const who = JSON.parse((result.content as { type: string; text: string }[])[0].text);
  expect(who).toEqual({
    sub: user.id,
    client_id: provider.registered!.client_id,
    scopes: expect.arrayContaining(['mcp:tools']),
  });
  await client.close();
});

it('a client named by its metadata document URL: no registration, the URL is its client_id through to the tool', async () => {
  const user = await buildUser(h.t.services, platformId);
  const redirectUrl = `${h.base}/__rp/callback`;
  const doc = docs.publish((req, res) =>
    json({
      client_id: doc.url,
      client_name: 'Document agent',
      redirect_uris: [redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      token_endpoint_auth_method: 'none',
    })(req, res),
  );
  const provider = new InMemoryOAuthClient({ redirectUrl, clientName: 'Document agent', clientMetadataUrl: doc.url });

  const transport = new StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider: provider });
  await expect(new Client({ name: 'latchkey-e2e-agent', version: '1.0.0' }).connect(transport)).rejects.toThrow(
    UnauthorizedError,
  );
  // The SDK keeps the URL as its client information; nothing was registered (no secret, no registration token).
  expect(provider.registered).toEqual({ client_id: doc.url, issuer: `${h.base}/platforms/${platformId}` });
  const authorizationUrl = provider.authorizationUrl!;
  expect(authorizationUrl.searchParams.get('client_id')).toBe(doc.url);
  expect(authorizationUrl.searchParams.get('resource')).toBe(mcpUrl);

  const consent = await signInAndAllow(authorizationUrl, user.email, transport);
  expect(consent).toContain('Document agent');
  expect(consent).toContain('This app registered itself.');
  expect(consent).toContain('Example MCP server');

  const client = await connect(provider);
  const result = await client.callTool({ name: 'whoami' });
  const who = JSON.parse((result.content as { type: string; text: string }[])[0].text);
  expect(who).toEqual({ sub: user.id, client_id: doc.url, scopes: expect.arrayContaining(['mcp:tools']) });
  await client.close();
  expect(doc.fetches()).toBe(1);
});
