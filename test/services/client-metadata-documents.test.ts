import { buildTestApp } from '../helpers';
import { buildPlatform, buildStandardPlatform } from '../factories';
import { json, startDocumentServer, type Handler } from '../support/document-server';
import { createOutboundFetch, outboundFetchFromConfig, type OutboundFetch } from '../../src/net/outbound-fetch';
import {
  CLIENT_METADATA_FETCH_LIMITS,
  DOCUMENT_CACHE_MIN_MS,
  FAILED_FETCH_BACKOFF_MS,
  createClientMetadataDocuments,
} from '../../src/services/client-metadata-documents.service';
import type { OAuthError } from '../../src/errors';
import type { Platform } from '../../src/domain/platform';

type TestApp = Awaited<ReturnType<typeof buildTestApp>>;

/** A client's web server on 127.0.0.1 over https (test/support/document-server.ts). */
let t: TestApp;
let docs: Awaited<ReturnType<typeof startDocumentServer>>;
let ca: string;

beforeAll(async () => {
  t = await buildTestApp();
  docs = await startDocumentServer();
  ca = docs.ca;
});
afterAll(async () => {
  await docs.close();
  await t.close();
});

const publish = (handler: Handler) => docs.publish(handler);

const documentFor = (url: string) => ({
  client_id: url,
  client_name: 'Agent',
  redirect_uris: ['https://agent.example/cb'],
  token_endpoint_auth_method: 'none',
});

/** A clock the test moves; the service's caches read it. */
function clock() {
  let at = Date.parse('2026-11-27T12:00:00Z');
  return { now: () => new Date(at), advance: (ms: number) => (at += ms) };
}

function service(
  now: () => Date,
  fetch: OutboundFetch = createOutboundFetch({ ...CLIENT_METADATA_FETCH_LIMITS, allowPrivateTargets: true, ca }),
) {
  return createClientMetadataDocuments({ ...t.services.deps, now }, t.services.audit, fetch);
}

async function refusal(work: Promise<unknown>): Promise<{ code: string; status: number; description: string }> {
  const err = (await work.then(
    () => undefined,
    (e: unknown) => e,
  )) as OAuthError | undefined;
  if (!err) throw new Error('expected a refusal');
  return { code: err.code, status: err.status, description: err.description };
}

async function auditOf(platform: Platform) {
  const { events } = await t.services.audit.list({ platformId: platform.id }, 50);
  return events.map((e) => ({ kind: e.kind, details: e.details }));
}

describe('client metadata documents', () => {
  let platform: Platform;
  beforeAll(async () => {
    platform = await buildStandardPlatform(t.services);
  });

  it('resolves a valid document as a public client and keeps it for its max-age', async () => {
    const c = clock();
    const s = service(c.now);
    let accept: string | undefined;
    const doc = publish((req, res) => {
      accept = req.headers.accept;
      json(documentFor(doc.url), { 'cache-control': 'public, max-age=600' })(req, res);
    });
    const client = await s.resolve(platform, doc.url, 'on');
    expect(client).toMatchObject({
      id: doc.url,
      platformId: platform.id,
      name: 'Agent',
      type: 'public',
      redirectUris: ['https://agent.example/cb'],
      sealedSecret: null,
    });
    expect(accept).toBe('application/json');
    c.advance(599_000);
    expect(await s.resolve(platform, doc.url, '127.0.0.1')).toEqual(client);
    expect(doc.fetches()).toBe(1);
    c.advance(2000);
    await s.resolve(platform, doc.url, 'on');
    expect(doc.fetches()).toBe(2);
  });

  it('keeps a short-lived document for the minimum, and refetches a no-store one every time', async () => {
    const c = clock();
    const s = service(c.now);
    const brief = publish((req, res) => json(documentFor(brief.url), { 'cache-control': 'max-age=5' })(req, res));
    await s.resolve(platform, brief.url, 'on');
    c.advance(DOCUMENT_CACHE_MIN_MS - 1000);
    await s.resolve(platform, brief.url, 'on');
    expect(brief.fetches()).toBe(1);

    const fresh = publish((req, res) => json(documentFor(fresh.url), { 'cache-control': 'no-store' })(req, res));
    await s.resolve(platform, fresh.url, 'on');
    await s.resolve(platform, fresh.url, 'on');
    expect(fresh.fetches()).toBe(2);
  });

  it('shares one fetch between concurrent requests for the same URL', async () => {
    const s = service(clock().now);
    const slow = publish((req, res) =>
      setTimeout(() => json(documentFor(slow.url), { 'cache-control': 'no-store' })(req, res), 100),
    );
    const clients = await Promise.all([1, 2, 3].map(() => s.resolve(platform, slow.url, 'on')));
    expect(clients.map((x) => x.id)).toEqual([slow.url, slow.url, slow.url]);
    expect(slow.fetches()).toBe(1);
  });

  it('refuses a document whose client_id is not its URL, audited with the host and reason only', async () => {
    const p = await buildStandardPlatform(t.services);
    const s = service(clock().now);
    const doc = publish((req, res) =>
      json({ ...documentFor(doc.url), client_id: 'https://famous.example/client.json', client_name: 'Secret Name' })(
        req,
        res,
      ),
    );
    expect(await refusal(s.resolve(p, doc.url, 'on'))).toEqual({
      code: 'invalid_client',
      status: 401,
      description: expect.stringMatching(
        /^The client metadata document at 127\.0\.0\.1 cannot be used: client_id "https:\/\/famous\.example\/client\.json" is not the URL/,
      ),
    });
    const events = await auditOf(p);
    expect(events).toEqual([
      {
        kind: 'client_metadata.refused',
        details: { host: '127.0.0.1', reason: expect.stringContaining('is not the URL') },
      },
    ]);
    expect(JSON.stringify(events)).not.toContain('Secret Name');
  });

  it.each<[string, Handler, string]>([
    [
      'an oversized document',
      (_q, r) =>
        r.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ pad: 'x'.repeat(6000) })),
      'larger than 5120 bytes',
    ],
    [
      'a status other than 200',
      (_q, r) => r.writeHead(404, { 'content-type': 'application/json' }).end('{}'),
      'answered 404, not 200',
    ],
    [
      'a 203 with a document',
      (_q, r) => r.writeHead(203, { 'content-type': 'application/json' }).end('{}'),
      'answered 203, not 200',
    ],
    [
      'a redirect',
      (_q, r) => r.writeHead(302, { location: '/elsewhere.json' }).end(),
      'answered 302, a redirect, which is not followed',
    ],
    [
      'HTML',
      (_q, r) => r.writeHead(200, { 'content-type': 'text/html' }).end('<html></html>'),
      'did not answer with JSON',
    ],
  ])('refuses %s', async (_what, handler, why) => {
    const p = await buildStandardPlatform(t.services);
    const doc = publish(handler);
    expect(await refusal(service(clock().now).resolve(p, doc.url, 'on'))).toMatchObject({
      code: 'invalid_client',
      description: expect.stringContaining(why),
    });
    expect(await auditOf(p)).toEqual([
      { kind: 'client_metadata.fetch_failed', details: { host: '127.0.0.1', reason: expect.stringContaining(why) } },
    ]);
    expect(docs.fetchesOf('/elsewhere.json')).toBe(0);
  });

  it('refuses a document that is not JSON, and one with a client secret', async () => {
    const bad = publish((_q, r) => r.writeHead(200, { 'content-type': 'application/json' }).end('{"client_id":'));
    expect((await refusal(service(clock().now).resolve(platform, bad.url, 'on'))).description).toContain(
      'not valid JSON',
    );
    const secret = publish((req, res) => json({ ...documentFor(secret.url), client_secret: 'shh' })(req, res));
    expect((await refusal(service(clock().now).resolve(platform, secret.url, 'on'))).description).toContain(
      'client_secret must not appear',
    );
  });

  it('trusts the test certificate only when told: without `ca`, a self-signed server is refused', async () => {
    const s = service(clock().now, createOutboundFetch({ ...CLIENT_METADATA_FETCH_LIMITS, allowPrivateTargets: true }));
    const doc = publish((req, res) => json(documentFor(doc.url))(req, res));
    expect((await refusal(s.resolve(platform, doc.url, 'on'))).description).toMatch(
      /cannot be used: 127\.0\.0\.1:\d+: [A-Z_]+/,
    );
    expect(doc.fetches()).toBe(0);
  });

  it('gives up on a server that does not answer in time', async () => {
    const s = service(
      clock().now,
      createOutboundFetch({ ...CLIENT_METADATA_FETCH_LIMITS, timeoutMs: 300, allowPrivateTargets: true, ca }),
    );
    const hang = publish(() => undefined);
    expect((await refusal(s.resolve(platform, hang.url, 'on'))).description).toContain(
      'no complete answer within 300 ms',
    );
  });

  it('does not fetch a failed URL again for a while, and audits the failure once', async () => {
    const p = await buildStandardPlatform(t.services);
    const c = clock();
    const s = service(c.now);
    let status = 500;
    const doc = publish((req, res) =>
      status === 200 ? json(documentFor(doc.url))(req, res) : res.writeHead(status).end(),
    );
    await refusal(s.resolve(p, doc.url, 'on'));
    status = 200;
    c.advance(FAILED_FETCH_BACKOFF_MS - 1000);
    expect((await refusal(s.resolve(p, doc.url, 'on'))).description).toContain(
      'answered 500, not 200 (on a fetch less than 60 s ago)',
    );
    expect(doc.fetches()).toBe(1);
    expect(await auditOf(p)).toHaveLength(1);
    c.advance(2000);
    expect((await s.resolve(p, doc.url, 'on')).id).toBe(doc.url);
    expect(doc.fetches()).toBe(2);
  });

  it('in production, the outbound guard refuses a URL on a private address before connecting', async () => {
    const p = await buildStandardPlatform(t.services);
    const config = { ...t.config, isProduction: true, allowPrivateNetworkTargets: false };
    const s = service(clock().now, outboundFetchFromConfig(config, CLIENT_METADATA_FETCH_LIMITS));
    const doc = publish((req, res) => json(documentFor(doc.url))(req, res));
    expect((await refusal(s.resolve(p, doc.url, 'on'))).description).toContain('127.0.0.1 is not a public address');
    expect(doc.fetches()).toBe(0);
    expect(await auditOf(p)).toEqual([
      {
        kind: 'client_metadata.fetch_failed',
        details: { host: '127.0.0.1', reason: expect.stringContaining('not a public address') },
      },
    ]);
  });

  it('fetches nothing when the platform policy, the URL or the platform profile refuses', async () => {
    const s = service(clock().now);
    const doc = publish((req, res) => json(documentFor(doc.url))(req, res));
    expect((await refusal(s.resolve(platform, doc.url, 'off'))).description).toContain(
      'does not accept client ID metadata documents (a URL as client_id)',
    );
    expect((await refusal(s.resolve(platform, doc.url, '*.example.com app.example.org'))).description).toContain(
      'does not accept client ID metadata documents from 127.0.0.1',
    );
    expect((await refusal(s.resolve(platform, `${doc.url}#x`, 'on'))).description).toContain(
      'must not have a fragment',
    );
    expect((await refusal(s.resolve(platform, doc.url.replace('https:', 'http:'), 'on'))).description).toContain(
      'not an https URL',
    );
    const seed = await buildPlatform(t.services);
    expect(await refusal(s.resolve(seed, doc.url, 'on'))).toMatchObject({
      code: 'invalid_client',
      description: expect.stringContaining('standard platforms only'),
    });
    expect(doc.fetches()).toBe(0);
  });

  it('is part of the services the app builds', () => {
    expect(typeof t.services.clientMetadataDocuments.resolve).toBe('function');
  });
});
