import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadConfig, ConfigError } from '../../src/config';
import { riskySettings } from '../../src/config-warnings';
import { createOutboundFetch, outboundFetchFromConfig, OutboundRequestError } from '../../src/net/outbound-fetch';
import { isPrivateAddress } from '../../src/net/private-address';

/** A relying party stand-in on 127.0.0.1 that records every request it receives. */
interface LocalServer {
  port: number;
  origin: string;
  seen: { method: string; url: string; host: string; body: string; headers: http.IncomingHttpHeaders }[];
  close(): Promise<void>;
}

async function startServer(
  handle: (req: http.IncomingMessage, res: http.ServerResponse) => void,
): Promise<LocalServer> {
  const seen: LocalServer['seen'] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      seen.push({
        method: req.method ?? '',
        url: req.url ?? '',
        host: req.headers.host ?? '',
        body,
        headers: req.headers,
      });
      handle(req, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    origin: `http://127.0.0.1:${port}`,
    seen,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function failure(promise: Promise<unknown>): Promise<OutboundRequestError> {
  const outcome = await promise.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(outcome).toBeInstanceOf(OutboundRequestError);
  return outcome as OutboundRequestError;
}

const production = {
  NODE_ENV: 'production',
  BASE_URL: 'https://id.example.com',
  MASTER_KEY: 'a'.repeat(43),
  SESSION_SECRET: 's'.repeat(32),
  SMTP_URL: 'smtp://mail:25',
};

describe('outbound requests', () => {
  let server: LocalServer;
  beforeEach(async () => {
    server = await startServer((req, res) => {
      if (req.url === '/redirect') {
        res.writeHead(302, { location: '/internal' }).end();
        return;
      }
      res.setHeader('set-cookie', ['a=1', 'b=2']);
      res.writeHead(201, { 'content-type': 'text/plain' }).end(`got ${req.method} ${req.url}`);
    });
  });
  afterEach(() => server.close());

  it('reaches a local server when private targets are allowed, with method, headers and body', async () => {
    const fetch = createOutboundFetch({ allowPrivateTargets: true });
    const res = await fetch(`http://localhost:${server.port}/logout?x=1`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'logout_token=abc',
    });
    expect(res.status).toBe(201);
    expect(res.body).toBe('got POST /logout?x=1');
    expect(res.headers.get('content-type')).toBe('text/plain');
    expect(res.headers.get('set-cookie')).toBe('a=1, b=2');
    expect(server.seen).toHaveLength(1);
    // The connection is pinned to the vetted address, but Host still names the URL's host
    expect(server.seen[0]).toMatchObject({
      method: 'POST',
      host: `localhost:${server.port}`,
      body: 'logout_token=abc',
    });
    expect(server.seen[0].headers['content-type']).toBe('application/x-www-form-urlencoded');
  });

  it.each([
    ['127.0.0.1', (p: number) => `http://127.0.0.1:${p}/`],
    ['localhost (a name resolving to loopback)', (p: number) => `http://localhost:${p}/`],
    ['[::1]', (p: number) => `http://[::1]:${p}/`],
    ['[::ffff:127.0.0.1]', (p: number) => `http://[::ffff:127.0.0.1]:${p}/`],
    ['127.0.0.1 written as one decimal number', (p: number) => `http://2130706433:${p}/`],
    ['0.0.0.0', (p: number) => `http://0.0.0.0:${p}/`],
    ['[::]', (p: number) => `http://[::]:${p}/`],
    ['10.x', () => 'http://10.1.2.3/'],
    ['172.16.x', () => 'https://172.16.0.1/'],
    ['192.168.x', () => 'http://192.168.1.1:8080/'],
    ['169.254.169.254 (cloud metadata)', () => 'http://169.254.169.254/latest/meta-data/'],
    ['100.64.x (CGNAT)', () => 'http://100.64.0.1/'],
    ['[fe80::1] (link-local)', () => 'http://[fe80::1]/'],
    ['[fd00::1] (unique-local)', () => 'http://[fd00::1]/'],
    ['[::ffff:169.254.169.254]', () => 'http://[::ffff:169.254.169.254]/'],
    ['224.0.0.1 (multicast)', () => 'http://224.0.0.1/'],
    ['255.255.255.255 (broadcast)', () => 'http://255.255.255.255/'],
  ])('refuses %s before connecting when private targets are not allowed', async (_name, urlOf) => {
    const fetch = createOutboundFetch({ allowPrivateTargets: false });
    const err = await failure(fetch(urlOf(server.port), { method: 'POST', body: 'logout_token=abc' }));
    expect(err.reason).toBe('refused');
    expect(err.message).not.toContain('logout_token');
    expect(server.seen).toHaveLength(0);
  });

  it('refuses private targets in production unless ALLOW_PRIVATE_NETWORK_TARGETS=true; development allows them', async () => {
    const url = `${server.origin}/rp`;
    expect((await failure(outboundFetchFromConfig(loadConfig(production))(url))).reason).toBe('refused');
    expect(server.seen).toHaveLength(0);
    expect(
      (await outboundFetchFromConfig(loadConfig({ ...production, ALLOW_PRIVATE_NETWORK_TARGETS: 'true' }))(url)).status,
    ).toBe(201);
    expect((await outboundFetchFromConfig(loadConfig({ NODE_ENV: 'development' }))(url)).status).toBe(201);
    expect((await outboundFetchFromConfig(loadConfig({ NODE_ENV: 'test' }))(url)).status).toBe(201);
    expect(server.seen).toHaveLength(3);
  });

  it('returns a redirect as it is, without following it', async () => {
    const res = await createOutboundFetch({ allowPrivateTargets: true })(`${server.origin}/redirect`);
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe('/internal');
    expect(server.seen.map((r) => r.url)).toEqual(['/redirect']);
  });

  it.each([
    ['ftp:', 'ftp://127.0.0.1/file'],
    ['file:', 'file:///etc/passwd'],
    ['user:pass@', 'http://user:pass@127.0.0.1/'],
    ['user@', 'https://user@example.com/'],
    ['javascript:', 'javascript:alert(1)'],
    ['not a URL', 'not a url'],
    ['a relative path', '/backchannel'],
  ])('rejects %s with bad_url before any connection', async (_name, raw) => {
    const url = raw.replace('127.0.0.1/', `127.0.0.1:${server.port}/`);
    const err = await failure(createOutboundFetch({ allowPrivateTargets: true })(url));
    expect(err.reason).toBe('bad_url');
    expect(server.seen).toHaveLength(0);
  });

  it('reports a refused connection as network', async () => {
    const gone = await startServer(() => {});
    await gone.close();
    const err = await failure(createOutboundFetch({ allowPrivateTargets: true })(gone.origin));
    expect(err.reason).toBe('network');
  });
});

describe('outbound request limits', () => {
  let server: LocalServer | undefined;
  afterEach(() => server?.close());

  it('times out on a server that never answers', async () => {
    server = await startServer(() => {});
    const err = await failure(createOutboundFetch({ allowPrivateTargets: true, timeoutMs: 200 })(server.origin));
    expect(err.reason).toBe('timeout');
  });

  it('times out on a server that sends headers but never finishes the body', async () => {
    server = await startServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('partial');
    });
    const err = await failure(createOutboundFetch({ allowPrivateTargets: true, timeoutMs: 200 })(server.origin));
    expect(err.reason).toBe('timeout');
  });

  it('stops reading a streamed response larger than the cap', async () => {
    server = await startServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream' }); // chunked: no length announced
      const chunk = Buffer.alloc(64 * 1024, 'x');
      for (let i = 0; i < 32; i++) res.write(chunk); // 2 MiB
      res.end();
    });
    const err = await failure(
      createOutboundFetch({ allowPrivateTargets: true, maxResponseBytes: 100 * 1024 })(server.origin),
    );
    expect(err.reason).toBe('too_large');
  });

  it('refuses a response whose Content-Length exceeds the cap, and accepts one exactly at the cap', async () => {
    server = await startServer((req, res) => res.end(Buffer.alloc(req.url === '/big' ? 2 * 1024 * 1024 : 1024, 'y')));
    const fetch = createOutboundFetch({ allowPrivateTargets: true, maxResponseBytes: 1024 });
    expect((await failure(fetch(`${server.origin}/big`))).reason).toBe('too_large');
    expect((await fetch(`${server.origin}/exact`)).body).toBe('y'.repeat(1024));
  });

  it('defaults to a 1 MiB cap', async () => {
    server = await startServer((_req, res) => res.end(Buffer.alloc(2 * 1024 * 1024, 'z')));
    expect((await failure(createOutboundFetch({ allowPrivateTargets: true })(server.origin))).reason).toBe('too_large');
  });
});

describe('ALLOW_PRIVATE_NETWORK_TARGETS', () => {
  it('is off by default and parsed like the other boolean keys', () => {
    expect(loadConfig({}).allowPrivateNetworkTargets).toBe(false);
    expect(loadConfig(production).allowPrivateNetworkTargets).toBe(false);
    expect(loadConfig({ ALLOW_PRIVATE_NETWORK_TARGETS: 'true' }).allowPrivateNetworkTargets).toBe(true);
    expect(loadConfig({ ALLOW_PRIVATE_NETWORK_TARGETS: '1' }).allowPrivateNetworkTargets).toBe(true);
    expect(loadConfig({ ...production, ALLOW_PRIVATE_NETWORK_TARGETS: 'false' }).allowPrivateNetworkTargets).toBe(
      false,
    );
    expect(() => loadConfig({ ALLOW_PRIVATE_NETWORK_TARGETS: 'yes' })).toThrow(ConfigError);
    expect(() => loadConfig({ ALLOW_PRIVATE_NETWORK_TARGETS: 'yes' })).toThrow(/ALLOW_PRIVATE_NETWORK_TARGETS: /);
  });

  it('is a start-up warning in production only', () => {
    const warning = /^ALLOW_PRIVATE_NETWORK_TARGETS=true: /;
    expect(riskySettings(loadConfig({ ...production, ALLOW_PRIVATE_NETWORK_TARGETS: 'true' }))).toEqual([
      expect.stringMatching(warning),
    ]);
    expect(riskySettings(loadConfig({ ALLOW_PRIVATE_NETWORK_TARGETS: 'true' }))).toEqual([]);
  });
});

describe('isPrivateAddress', () => {
  it.each([
    '127.0.0.1',
    '127.255.255.254',
    '10.0.0.1',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.0.1',
    '169.254.169.254',
    '100.64.0.1',
    '100.127.255.255',
    '0.0.0.0',
    '0.1.2.3',
    '224.0.0.1',
    '239.255.255.250',
    '255.255.255.255',
    '240.0.0.1',
    '192.0.2.1',
    '198.18.0.1',
    '::',
    '::1',
    '[::1]',
    'fe80::1',
    'fe80::1%eth0',
    'febf::1',
    'fc00::1',
    'fd12:3456::1',
    'ff02::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::FFFF:10.0.0.1',
    '::ffff:169.254.169.254',
    '::127.0.0.1',
    '64:ff9b::10.0.0.1',
    '64:ff9b::a9fe:a9fe',
    '2002:7f00:1::1',
    '2002:c0a8:101::',
    '2001:db8::1',
    '2001::1',
    'not-an-ip',
    '',
    '1.2.3',
    'localhost',
  ])('refuses %s', (address) => {
    expect(isPrivateAddress(address)).toBe(true);
  });

  it.each([
    '8.8.8.8',
    '1.1.1.1',
    '93.184.215.14',
    '172.32.0.1',
    '172.15.255.255',
    '100.128.0.1',
    '100.63.255.255',
    '169.253.0.1',
    '11.0.0.1',
    '223.255.255.255',
    '2606:4700:4700::1111',
    '2a00:1450:4001:80b::200e',
    '::ffff:8.8.8.8',
    '64:ff9b::808:808',
    '2002:808:808::1',
  ])('allows the public address %s', (address) => {
    expect(isPrivateAddress(address)).toBe(false);
  });
});
