import type { AddressInfo } from 'node:net';
import { createServer, type Server } from 'node:http';
import { createAppServer } from '../../src/http/server';
import { buildTestApp } from '../helpers';
import { buildClient, buildPlatform } from '../factories';

/**
 * The provider's server (src/http/server.ts) builds requests and responses with Express's
 * prototypes from the start, for speed. Every answer must stay what the ordinary server gives.
 */
describe('the app server gives the same answers as a plain node:http server', () => {
  let t: Awaited<ReturnType<typeof buildTestApp>>;
  const servers: Server[] = [];
  let fast: string;
  let plain: string;
  let guid: string;
  let clientId: string;

  const listen = async (server: Server) => {
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  };

  beforeAll(async () => {
    t = await buildTestApp();
    const platform = await buildPlatform(t.services);
    guid = platform.id;
    clientId = (await buildClient(t.services, platform.id)).id;
    fast = await listen(createAppServer(t.app));
    plain = await listen(createServer(t.app));
  });
  afterAll(async () => {
    for (const s of servers) await new Promise((resolve) => s.close(resolve));
    await t.close();
  });

  /** Status, body and the headers that do not change per request. */
  async function answer(base: string, path: string, init: RequestInit = {}) {
    const res = await fetch(base + path, { redirect: 'manual', ...init });
    const headers: Record<string, string> = {};
    res.headers.forEach((value, name) => {
      if (!['date', 'x-request-id', 'connection', 'keep-alive'].includes(name)) headers[name] = value;
    });
    const body = (await res.text()).replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '<uuid>');
    return { status: res.status, headers, body };
  }

  const form = (fields: Record<string, string>) => ({
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields).toString(),
  });

  it.each([
    ['discovery', () => `/.well-known/openid-configuration?platform_guid=${guid}`, () => ({})],
    ['JWKS', () => `/oauth/jwks?platform_guid=${guid}`, () => ({})],
    ['an unknown platform', () => '/oauth/jwks?platform_guid=nope', () => ({})],
    ['userinfo without a token', () => '/oauth/userinfo', () => ({})],
    [
      'the token endpoint with a wrong secret',
      () => '/oauth/token',
      () => ({
        ...form({ grant_type: 'refresh_token', refresh_token: 'rt_x', platform_guid: guid }),
        headers: {
          'Content-Type': 'application/x-www-form-urlencoded',
          Authorization: `Basic ${Buffer.from(`${clientId}:wrong`).toString('base64')}`,
        },
      }),
    ],
    [
      'an authorize request (a browser page)',
      () =>
        `/oauth/authorize?platform_guid=${guid}&client_id=${clientId}&response_type=code&redirect_uri=https%3A%2F%2Fevil.example%2Fcb&scope=openid`,
      () => ({}),
    ],
    ['a missing page', () => '/account/nowhere', () => ({ headers: { Accept: 'text/html' } })],
    ['the home page', () => '/', () => ({})],
    ['a static file', () => '/static/app.css', () => ({})],
  ])('%s', async (_name, path, init) => {
    const [a, b] = await Promise.all([answer(fast, path(), init()), answer(plain, path(), init())]);
    expect(a).toEqual(b);
    expect(a.status).toBeLessThan(500);
    expect(a.body).not.toContain('undefined');
  });

  it('keeps the request id a proxy sent', async () => {
    const res = await fetch(`${fast}/healthz`, { headers: { 'X-Request-Id': 'abc-123' } });
    expect(res.headers.get('x-request-id')).toBe('abc-123');
  });
});
