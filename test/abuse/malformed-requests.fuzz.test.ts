import request from 'supertest';
import fc from 'fast-check';
import { buildTestApp } from '../helpers';
import { buildClient, buildCode, buildPlatform, buildUser } from '../factories';

// Property: whatever arrives — method, path, query, body, content type, headers — the provider
// answers without a 5xx, errors keep the spec's shape, and hostile input is never echoed raw
// into HTML. FUZZ_RUNS raises the number of requests (default keeps the suite fast).
const RUNS = Number(process.env.FUZZ_RUNS ?? 300);
/** This run's source address (RFC 2544 benchmarking range), so its rate-limit counts touch no other suite's. */
const FUZZ_IP = `198.18.${Math.floor(Math.random() * 256)}.${1 + Math.floor(Math.random() * 254)}`;

let t: Awaited<ReturnType<typeof buildTestApp>>;
let live: { platform: string; client: string; secret: string; redirect: string; user: string; code: string; cookie: string; iid: string; csrf: string };
beforeAll(async () => {
  // The limiters run (and parse credentials) but never refuse. Their counters are shared with the
  // other suites, so every request comes from this run's own address (see send()).
  t = await buildTestApp({ RATE_LIMIT_SCALE: '1000', TRUST_PROXY: 'loopback' });
  const p = await buildPlatform(t.services);
  const c = await buildClient(t.services, p.id);
  const u = await buildUser(t.services, p.id);
  const code = await buildCode(t.services, { platformId: p.id, client: c, user: u });
  // A live browser interaction, so random form posts reach the hosted pages' handlers.
  const start = await request(t.app).get(`/oauth/authorize?${new URLSearchParams({ platform_guid: p.id, response_type: 'code', client_id: c.id, redirect_uri: c.redirectUris[0], scope: 'openid' })}`);
  const cookie = String(start.headers['set-cookie']?.[0] ?? '').split(';')[0];
  const page = await request(t.app).get(start.headers.location).set('Cookie', cookie);
  live = {
    platform: p.id, client: c.id, secret: c.secret!, redirect: c.redirectUris[0], user: u.id, code, cookie,
    iid: /\/interaction\/([^/"?]+)/.exec(start.headers.location)![1], csrf: /name="_csrf" value="([^"]+)"/.exec(page.text)![1],
  };
  expect(cookie).toMatch(/^latchkey\.sid=/);
});
afterAll(() => t.close());

/** Hostile values, written as they travel on the wire (some are deliberately broken escapes). */
const HOSTILE_HTML = ['<script>alert(1)</script>', '"><img src=x onerror=alert(1)>'];
const HOSTILE_SQL = ["' OR 1=1--", "'; DROP TABLE users; --"];
const WIRE_NASTY = [
  '%C3%28', '%FF', '%', '%zz', '%00', '%E0%80%AF', '%ED%A0%80', '%F0%28%8C%28', '..%2F..%2Fetc%2Fpasswd', '%2e%2e',
  '{{7*7}}', '${7*7}', '<%25= 7*7 %25>', '__proto__', 'constructor', 'toString', 'a[b][c]', '[]', 'x[', 'x]', '%5B%5D',
  '+', '++', '&&', '==', ';', '\\', 'null', 'undefined', '-1', '1e309', 'NaN', 'true', '00000000-0000-0000-0000-000000000000',
];
const PARAMS = [
  'platform_guid', 'client_id', 'client_secret', 'redirect_uri', 'response_type', 'scope', 'state', 'nonce', 'grant_type', 'code',
  'code_verifier', 'code_challenge', 'code_challenge_method', 'refresh_token', 'token', 'token_type_hint', 'prompt', 'max_age',
  'login_hint', 'id_token_hint', 'action', 'request', 'request_uri', 'access_token', 'email', 'password', 'given_name',
  'family_name', 'birthdate', 'phone_number', '_csrf', 'restart', 'decision', 'account', 'signout', 'signout_all', 'another',
  'post_logout_redirect_uri', 'current_password', 'new_password', 'picture_url', 'ui_locales', 'return_to',
];

/** Anything outside printable ASCII (and space) is percent-encoded; the rest stays raw on purpose. */
const wire = (s: string) => s.replace(/[^\x21-\x7e]/g, (ch) => encodeURIComponent(ch).replace(/%25/g, '%'));

const value = () =>
  fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(...WIRE_NASTY) },
    { weight: 3, arbitrary: fc.constantFrom(...HOSTILE_HTML, ...HOSTILE_SQL).map(wire) },
    { weight: 3, arbitrary: fc.constantFrom('live.platform', 'live.client', 'live.secret', 'live.redirect', 'live.user', 'live.code', 'live.csrf') },
    { weight: 2, arbitrary: fc.constantFrom('authorization_code', 'refresh_token', 'code', 'openid', 'openid offline_access', 'S256', 'none', 'login', 'allow') },
    { weight: 3, arbitrary: fc.string({ unit: 'grapheme', maxLength: 40 }).map((s) => encodeURIComponent(s)) },
    { weight: 1, arbitrary: fc.string({ maxLength: 40 }).map(wire) },
    { weight: 1, arbitrary: fc.integer({ min: 100, max: 40_000 }).map((n) => 'A'.repeat(n)) },
  );
const key = () => fc.oneof({ weight: 5, arbitrary: fc.constantFrom(...PARAMS) }, { weight: 2, arbitrary: fc.constantFrom(...WIRE_NASTY) }, { weight: 1, arbitrary: fc.string({ maxLength: 12 }).map(wire) });
const pair = () => fc.oneof(fc.tuple(key(), value()).map(([k, v]) => `${k}=${v}`), key(), value());
/** Well-formed pieces of real requests, so that generated requests get past the first checks. */
const REAL = [
  'platform_guid=live.platform', 'client_id=live.client', 'redirect_uri=live.redirect', 'response_type=code', 'scope=openid+offline_access',
  'grant_type=authorization_code', 'grant_type=refresh_token', 'code=live.code', 'refresh_token=rt_x', '_csrf=live.csrf', 'token=live.code',
  'client_secret=live.secret', 'email=ada%40example.com', 'password=correct+horse', 'decision=allow', 'state=s', 'code_verifier=v',
  'given_name=Ada', 'family_name=L', 'birthdate=2000-01-01', 'account=live.user', 'prompt=login', 'login_hint=ada%40example.com',
];
/** A query or form string: some real pieces, random pairs, sometimes a key repeated. */
const formString = () =>
  fc
    .tuple(fc.shuffledSubarray(REAL, { maxLength: 8 }), fc.array(pair(), { maxLength: 6 }), fc.option(fc.constantFrom(...PARAMS), { nil: undefined }), fc.boolean())
    .map(([real, pairs, dup, realFirst]) => [...(realFirst ? [...real, ...pairs] : [...pairs, ...real]), ...(dup ? [`${dup}=1`, `${dup}=2`] : [])].join('&'));

const segment = () => fc.oneof(fc.constantFrom(...WIRE_NASTY, ...HOSTILE_HTML.map(wire), 'live.iid', 'live.platform', 'live.user'), fc.string({ maxLength: 16 }).map(wire));
const path = () =>
  fc.oneof(
    { weight: 8, arbitrary: fc.constantFrom('/.well-known/openid-configuration', '/oauth/authorize', '/oauth/token', '/oauth/userinfo', '/oauth/jwks', '/oauth/introspect', '/oauth/revoke') },
    { weight: 4, arbitrary: fc.constantFrom('', '/signin', '/signup', '/consent', '/chooser', '/forgot').map((s) => `/interaction/live.iid${s}`) },
    {
      weight: 4,
      arbitrary: fc.constantFrom(
        '/account', '/account/choose', '/account/signed-out', '/account/signin', '/account/apps/revoke', '/account/password', '/account/picture',
        '/account/picture-url', '/account/picture/remove', '/account/profile', '/account/signout', '/account/signout-everywhere',
        '/account/verify-email', '/oauth/logout', '/oauth/logout/confirm', '/password/forgot', '/password/forgot/sent', '/password/reset',
        '/password/reset/done', '/verify-email', '/pictures/live.platform/live.user/1', '/dev/outbox', '/dev/outbox/x/html',
      ),
    },
    { weight: 2, arbitrary: fc.tuple(fc.constantFrom('/interaction/', '/avatars/live.platform/', '/oauth/', '/static/', '/', '/.well-known/'), segment()).map(([a, b]) => a + b) },
    { weight: 1, arbitrary: fc.constantFrom('/healthz', '/readyz', '/avatars/live.platform/live.user.svg') },
  );

const CONTENT_TYPES = [
  undefined, 'application/x-www-form-urlencoded', 'application/x-www-form-urlencoded; charset=utf-8', 'application/x-www-form-urlencoded; charset=klingon',
  'application/x-www-form-urlencoded; charset=utf-16', 'application/json', 'text/plain', 'multipart/form-data; boundary=x', 'application/xml', 'garbage', '',
];
const body = () =>
  fc.oneof(
    { weight: 5, arbitrary: formString() },
    { weight: 1, arbitrary: fc.json() },
    { weight: 1, arbitrary: fc.constantFrom('{"a":', '{"platform_guid":["x"]}', '<xml/>', '--x\r\nContent-Disposition: form-data; name="a"\r\n\r\nb\r\n--x--') },
    { weight: 1, arbitrary: fc.integer({ min: 33_000, max: 40_000 }).map((n) => `token=${'A'.repeat(n)}`) },
    { weight: 1, arbitrary: fc.integer({ min: 101, max: 300 }).map((n) => Array.from({ length: n }, (_, i) => `p${i}=1`).join('&')) },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 64 }).map((a) => Buffer.from(a)) },
  );
const headerValue = () => fc.string({ maxLength: 60 }).map((s) => s.replace(/[^\x20-\x7e]/g, ''));
const authorization = () =>
  fc.oneof(
    fc.constantFrom('Basic', 'Basic ', 'Basic %%%', 'Basic ====', 'Bearer', 'Bearer ', 'Bearer a.b.c', 'Bearer <script>', 'Digest x', 'basic Og==', 'Basic Og==', 'Basic OjE6Mg=='),
    fc.tuple(headerValue(), headerValue()).map(([a, b]) => `Basic ${Buffer.from(`${a}:${b}`).toString('base64')}`),
    fc.constant('live.basic'),
    headerValue().map((s) => `Bearer ${s}`),
    headerValue(),
  );
const headers = () =>
  fc.record(
    {
      authorization: authorization(),
      accept: fc.constantFrom('text/html', 'application/json', '*/*', 'garbage', 'text/html;q=0.1, application/json', ''),
      cookie: fc.oneof({ weight: 4, arbitrary: fc.constant('live.cookie') }, { weight: 1, arbitrary: headerValue().map((s) => `latchkey.sid=${s}`) }, { weight: 1, arbitrary: fc.constant('latchkey.sid=s%3Aforged.sig') }),
      'x-forwarded-for': fc.oneof(headerValue(), fc.constant('203.0.113.5, <script>')),
      origin: headerValue(),
      'accept-encoding': fc.constantFrom('gzip', 'identity', 'garbage', 'br;q=2'),
      'content-encoding': fc.constantFrom('gzip', 'deflate', 'garbage', 'identity'),
    },
    { requiredKeys: [] },
  );

const METHODS = ['get', 'post', 'put', 'delete', 'patch', 'head', 'options'] as const;
const requestArb = fc.record({
  method: fc.constantFrom(...METHODS, 'get', 'post', 'post', 'get'),
  path: path(),
  query: fc.option(formString(), { nil: undefined }),
  contentType: fc.constantFrom(...CONTENT_TYPES),
  body: fc.option(body(), { nil: undefined }),
  headers: headers(),
});
type FuzzRequest = typeof requestArb extends fc.Arbitrary<infer T> ? T : never;

/** Puts the live fixtures (real platform, client, code, session) where the generator asked for them. */
function materialise(s: string): string {
  return s
    .replace(/live\.platform/g, live.platform).replace(/live\.client/g, live.client).replace(/live\.secret/g, encodeURIComponent(live.secret))
    .replace(/live\.redirect/g, encodeURIComponent(live.redirect)).replace(/live\.user/g, live.user).replace(/live\.code/g, live.code)
    .replace(/live\.csrf/g, encodeURIComponent(live.csrf)).replace(/live\.iid/g, live.iid);
}

async function send(r: FuzzRequest) {
  const url = materialise(r.path) + (r.query !== undefined ? `?${materialise(r.query)}` : '');
  let req = request(t.app)[r.method](url);
  for (const [name, raw] of Object.entries({ ...r.headers, 'x-forwarded-for': undefined })) {
    if (raw === undefined) continue;
    const v = raw === 'live.cookie' ? live.cookie : raw === 'live.basic' ? `Basic ${Buffer.from(`${live.client}:${encodeURIComponent(live.secret)}`).toString('base64')}` : materialise(raw);
    req = req.set(name, v);
  }
  // Garbage to the left, this run's address last: the address the trusted loopback proxy saw.
  const forwarded = r.headers['x-forwarded-for'];
  req = req.set('X-Forwarded-For', forwarded === undefined ? FUZZ_IP : `${materialise(forwarded)}, ${FUZZ_IP}`);
  if (r.contentType !== undefined) req = req.set('Content-Type', r.contentType);
  if (r.body !== undefined && r.method !== 'get' && r.method !== 'head') req = req.send(typeof r.body === 'string' ? materialise(r.body) : r.body);
  return req.ok(() => true);
}

const LEAKS = /\bat \S+ \(.*:\d+:\d+\)|node_modules|syntax error at or near|\bselect\b.+\bfrom\b|ECONNREFUSED|TypeError|ReferenceError/i;

function check(r: FuzzRequest, res: request.Response) {
  const where = `${r.method.toUpperCase()} ${r.path} → ${res.status}`;
  if (res.status === 431) return; // Node's HTTP parser refuses an oversize request line or headers before the app runs
  expect({ where, status: res.status < 500 }).toEqual({ where, status: true });
  const type = String(res.headers['content-type'] ?? '');
  if (res.status >= 400 && r.method !== 'head') {
    expect({ where, type: /^(application\/json|text\/html)/.test(type) }).toEqual({ where, type: true });
  }
  if (type.startsWith('application/json') && res.status >= 400 && r.method !== 'head') {
    expect({ where, keys: Object.keys(res.body).sort() }).toEqual({ where, keys: ['error', 'error_description'] });
    expect(typeof res.body.error).toBe('string');
    expect(typeof res.body.error_description).toBe('string');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
  }
  const text = res.text ?? '';
  if (type.startsWith('text/html')) {
    for (const hostile of [...HOSTILE_HTML, ...HOSTILE_SQL]) expect({ where, echoed: text.includes(hostile) ? hostile : null }).toEqual({ where, echoed: null });
  }
  expect({ where, leak: LEAKS.exec(text)?.[0] ?? null }).toEqual({ where, leak: null });
}

/** A short account of a request for failure messages (values can be 40 kB long). */
const summary = (r: FuzzRequest) => {
  const cut = (v: unknown) => { const x = typeof v === 'string' ? v : Buffer.isBuffer(v) ? `<${v.length} bytes>` : JSON.stringify(v); return x && x.length > 300 ? `${x.slice(0, 300)}…(${x.length})` : x; };
  return JSON.stringify({ method: r.method, path: cut(r.path), query: cut(r.query), contentType: r.contentType, body: cut(r.body), headers: r.headers }, null, 1);
};

describe('malformed requests at every endpoint (property-based)', () => {
  it('never answers 5xx, keeps the error format and echoes nothing hostile into HTML', async () => {
    const out = await fc.check(fc.asyncProperty(requestArb, async (r) => check(r, await send(r))), { numRuns: RUNS, endOnFailure: true });
    if (out.failed) {
      const cause = String((out.errorInstance as Error)?.message ?? out.errorInstance).slice(0, 1500);
      throw new Error(`seed ${out.seed}, after ${out.numRuns} runs:\n${summary(out.counterexample![0])}\n${cause}`);
    }
  }, 120_000);
});
