import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { createAppServer } from '../../src/http/server';
import { buildPlatform } from '../factories';
import { buildTestApp, expectOAuthError } from '../helpers';

/**
 * Everything outside the hosted pages answers errors in the JSON shape {error, error_description},
 * whatever the request accepts, and so do the requests Node's HTTP parser refuses before the app
 * runs (its `clientError`, which lives on the server: hence the real server, not supertest).
 */
let t: Awaited<ReturnType<typeof buildTestApp>>;
let server: http.Server;
let port: number;
beforeAll(async () => {
  t = await buildTestApp();
  server = createAppServer(t.app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await t.close();
});

const long = (n: number) => 'x'.repeat(n);

/** One request with node:http's client: status, headers and the whole body (the server closes the connection). */
function get(
  path: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path, headers, agent: false }, (res) => {
      let body = '';
      res
        .setEncoding('utf8')
        .on('data', (d) => (body += d))
        .on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
    });
    req.on('error', reject);
  });
}

/**
 * Bytes on a raw TCP connection; everything the server sends until it closes, split into status,
 * headers and body. `ending: false` keeps the sending side open, as a client still sending a long
 * request does, and closes it once the whole answer (by its Content-Length) has arrived.
 */
function raw(
  bytes: string,
  { ending = true } = {},
): Promise<{ status: number; headers: Record<string, string>; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () =>
      ending ? socket.end(bytes, 'latin1') : socket.write(bytes, 'latin1'),
    );
    let text = '';
    const parse = () => {
      const [head, ...rest] = text.split('\r\n\r\n');
      const [statusLine, ...lines] = head.split('\r\n');
      const headers = Object.fromEntries(
        lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]),
      );
      return { status: Number(statusLine.split(' ')[1]), headers, body: rest.join('\r\n\r\n') };
    };
    socket
      .setEncoding('utf8')
      .on('data', (d) => {
        text += d;
        const answer = parse();
        if (
          !ending &&
          text.includes('\r\n\r\n') &&
          Buffer.byteLength(answer.body) >= Number(answer.headers['content-length'])
        )
          socket.end();
      })
      .on('error', reject)
      .on('close', () => resolve(parse()));
  });
}

/** The API's error shape, complete: JSON, its length, no-store, nosniff, and the connection closed. */
function expectJsonError(
  res: { status: number; headers: Record<string, string | string[] | undefined>; body: string },
  status: number,
) {
  expect(res.status).toBe(status);
  expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
  expect(Number(res.headers['content-length'])).toBe(Buffer.byteLength(res.body));
  expect(res.headers['cache-control']).toBe('no-store');
  expect(res.headers['x-content-type-options']).toBe('nosniff');
  expect(res.headers.connection).toBe('close');
  expect(JSON.parse(res.body)).toEqual({ error: 'invalid_request', error_description: expect.any(String) });
}

describe("Node's own refusals, on the real server", () => {
  it('a request line over 16 KiB on an API path: 431 in the JSON error shape', async () => {
    const res = await get(`/oauth/token?platform_guid=${long(40_000)}`);
    expectJsonError(res, 431);
    expect(JSON.parse(res.body).error_description).toMatch(/too large/);
  });

  it('headers over 16 KiB: 431 in the JSON error shape, even to a browser', async () => {
    expectJsonError(
      await get('/.well-known/openid-configuration', { 'X-Padding': long(20_000), Accept: 'text/html' }),
      431,
    );
  });

  it.each([
    ['a request line with a stray word', 'GET /oauth/jwks HTTP/1.1 junk\r\nHost: x\r\n\r\n'],
    ['a Content-Length that is not a number', 'POST /oauth/token HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n'],
    [
      'no request line at all (a TLS hello on the plain port)',
      '\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03 junk\r\n\r\n',
    ],
    ['a header without a colon', 'GET /oauth/userinfo HTTP/1.1\r\nHost: x\r\nnot a header\r\n\r\n'],
  ])('%s: 400 in the JSON error shape', async (_label, bytes) => {
    expectJsonError(await raw(bytes), 400);
  });

  it('a refused request still being sent (1 MB of headers) gets its whole answer, not a reset', async () => {
    for (let i = 0; i < 5; i++) {
      expectJsonError(
        await raw(`GET /oauth/jwks HTTP/1.1\r\nHost: x\r\nX-Padding: ${long(1_000_000)}\r\n\r\n`, { ending: false }),
        431,
      );
    }
  });

  it('a hosted page refused the same way answers the styled error page, not a bare status', async () => {
    const res = await get(`/account/signin?platform_guid=${long(40_000)}`, { Accept: 'text/html' });
    expect(res.status).toBe(431);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers['content-security-policy']).toContain("default-src 'none'");
    expect(res.body).toContain('This request could not be completed');
    expect(res.body).toContain('Error 431');
    expect(res.body).toContain('The request line or headers are too large');
    expect(res.body).not.toContain('xxxxxxxx'); // nothing of the request echoed
  });

  it('the server stays up and answers the next request as usual', async () => {
    await raw('BLAH\r\n\r\n');
    const res = await get('/healthz');
    expect(res.status).toBe(200);
  });
});

describe('content negotiation never turns an API error into HTML', () => {
  it.each([
    ['POST to discovery', 'post', '/.well-known/openid-configuration'],
    ['PUT to the JWKS', 'put', '/oauth/jwks'],
    ['DELETE to health', 'delete', '/healthz'],
    ['an unknown top-level path', 'get', '/nothing-here'],
    ['an unknown well-known document', 'get', '/.well-known/nothing'],
  ] as const)('%s, asked for text/html: 404 in the JSON error shape', async (_label, method, path) => {
    const res = await request(t.app)[method](path).set('Accept', 'text/html');
    expectOAuthError(res, 404, 'not_found');
    expect(res.headers['content-type']).toMatch(/^application\/json/);
  });

  it("a POST to a standard platform's discovery under its issuer path, asked for text/html: JSON", async () => {
    const p = await buildPlatform(t.services);
    const res = await request(t.app)
      .post(`/platforms/${p.id}/.well-known/openid-configuration`)
      .set('Accept', 'text/html');
    expectOAuthError(res, 404, 'not_found');
  });

  it('an unknown address under the hosted pages still gets the 404 page', async () => {
    const res = await request(t.app).get('/account/nothing-here').set('Accept', 'text/html');
    expect(res.status).toBe(404);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.text).toContain('Page not found');
  });
});
