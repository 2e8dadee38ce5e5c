import fc from 'fast-check';
import { checkAnswer, HOSTILE_HTML, HOSTILE_SQL, startFuzzApp, stats, type FuzzApp, type Live } from './fuzz-fixtures';
import { idRequest, materialiseId, onTheWire, POSITIONS, type IdRequestCase } from './near-valid-ids';

// Property: whatever arrives — method, path, query, body, content type, headers, and near-valid
// identifiers in every identifier position — the provider answers without a 5xx, errors keep the
// spec's shape, and hostile input is never echoed raw into HTML. The aim is at least 10,000
// requests without a 5xx: the suite counts what it sent and asserts both. FUZZ_RUNS and
// FUZZ_ID_RUNS change the two properties' runs (below 10,000 together, the floor is their sum).
const RUNS = Number(process.env.FUZZ_RUNS ?? 5000);
const ID_RUNS = Number(process.env.FUZZ_ID_RUNS ?? 5500);
const MIN_REQUESTS = 10_000;

let app: FuzzApp;
let live: Live;
beforeAll(async () => {
  app = await startFuzzApp();
  live = app.live;
}, 60_000);
afterAll(() => app.close());

/** Values written as they travel on the wire (some are deliberately broken escapes). */
const WIRE_NASTY = [
  '%C3%28',
  '%FF',
  '%',
  '%zz',
  '%00',
  '%E0%80%AF',
  '%ED%A0%80',
  '%F0%28%8C%28',
  '..%2F..%2Fetc%2Fpasswd',
  '%2e%2e',
  '{{7*7}}',
  '${7*7}',
  '<%25= 7*7 %25>',
  '__proto__',
  'constructor',
  'toString',
  'a[b][c]',
  '[]',
  'x[',
  'x]',
  '%5B%5D',
  '+',
  '++',
  '&&',
  '==',
  ';',
  '\\',
  'null',
  'undefined',
  '-1',
  '1e309',
  'NaN',
  'true',
  '00000000-0000-0000-0000-000000000000',
];
const PARAMS = [
  'platform_guid',
  'client_id',
  'client_secret',
  'redirect_uri',
  'response_type',
  'scope',
  'state',
  'nonce',
  'grant_type',
  'code',
  'code_verifier',
  'code_challenge',
  'code_challenge_method',
  'refresh_token',
  'token',
  'token_type_hint',
  'prompt',
  'max_age',
  'login_hint',
  'id_token_hint',
  'action',
  'request',
  'request_uri',
  'access_token',
  'email',
  'password',
  'given_name',
  'family_name',
  'birthdate',
  'phone_number',
  '_csrf',
  'restart',
  'decision',
  'account',
  'signout',
  'signout_all',
  'another',
  'post_logout_redirect_uri',
  'current_password',
  'new_password',
  'picture_url',
  'ui_locales',
  'return_to',
];

/** Anything outside printable ASCII (and space) is percent-encoded; the rest stays raw on purpose. */
const wire = (s: string) => s.replace(/[^\x21-\x7e]/g, (ch) => encodeURIComponent(ch).replace(/%25/g, '%'));

const value = () =>
  fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(...WIRE_NASTY) },
    { weight: 3, arbitrary: fc.constantFrom(...HOSTILE_HTML, ...HOSTILE_SQL).map(wire) },
    {
      weight: 3,
      arbitrary: fc.constantFrom(
        'live.platform',
        'live.client',
        'live.secret',
        'live.redirect',
        'live.user',
        'live.code',
        'live.csrf',
      ),
    },
    {
      weight: 2,
      arbitrary: fc.constantFrom(
        'authorization_code',
        'refresh_token',
        'code',
        'openid',
        'openid offline_access',
        'S256',
        'none',
        'login',
        'allow',
      ),
    },
    { weight: 3, arbitrary: fc.string({ unit: 'grapheme', maxLength: 40 }).map((s) => encodeURIComponent(s)) },
    { weight: 1, arbitrary: fc.string({ maxLength: 40 }).map(wire) },
    { weight: 1, arbitrary: fc.integer({ min: 100, max: 40_000 }).map((n) => 'A'.repeat(n)) },
  );
const key = () =>
  fc.oneof(
    { weight: 5, arbitrary: fc.constantFrom(...PARAMS) },
    { weight: 2, arbitrary: fc.constantFrom(...WIRE_NASTY) },
    { weight: 1, arbitrary: fc.string({ maxLength: 12 }).map(wire) },
  );
const pair = () =>
  fc.oneof(
    fc.tuple(key(), value()).map(([k, v]) => `${k}=${v}`),
    key(),
    value(),
  );
/** Well-formed pieces of real requests, so that generated requests get past the first checks. */
const REAL = [
  'platform_guid=live.platform',
  'client_id=live.client',
  'redirect_uri=live.redirect',
  'response_type=code',
  'scope=openid+offline_access',
  'grant_type=authorization_code',
  'grant_type=refresh_token',
  'code=live.code',
  'refresh_token=rt_x',
  '_csrf=live.csrf',
  'token=live.code',
  'client_secret=live.secret',
  'email=ada%40example.com',
  'password=correct+horse',
  'decision=allow',
  'state=s',
  'code_verifier=v',
  'given_name=Ada',
  'family_name=L',
  'birthdate=2000-01-01',
  'account=live.user',
  'prompt=login',
  'login_hint=ada%40example.com',
  '_csrf=live.accountCsrf',
  'client_id=live.publicClient',
];
/** A query or form string: some real pieces, random pairs, sometimes a key repeated. */
const formString = () =>
  fc
    .tuple(
      fc.shuffledSubarray(REAL, { maxLength: 8 }),
      fc.array(pair(), { maxLength: 6 }),
      fc.option(fc.constantFrom(...PARAMS), { nil: undefined }),
      fc.boolean(),
    )
    .map(([real, pairs, dup, realFirst]) =>
      [...(realFirst ? [...real, ...pairs] : [...pairs, ...real]), ...(dup ? [`${dup}=1`, `${dup}=2`] : [])].join('&'),
    );

const segment = () =>
  fc.oneof(
    fc.constantFrom(...WIRE_NASTY, ...HOSTILE_HTML.map(wire), 'live.iid', 'live.platform', 'live.user'),
    fc.string({ maxLength: 16 }).map(wire),
  );
const path = () =>
  fc.oneof(
    {
      weight: 8,
      arbitrary: fc.constantFrom(
        '/.well-known/openid-configuration',
        '/oauth/authorize',
        '/oauth/token',
        '/oauth/userinfo',
        '/oauth/jwks',
        '/oauth/introspect',
        '/oauth/revoke',
      ),
    },
    {
      weight: 4,
      arbitrary: fc
        .constantFrom('', '/signin', '/signup', '/consent', '/chooser', '/forgot')
        .map((s) => `/interaction/live.iid${s}`),
    },
    { weight: 1, arbitrary: fc.constantFrom('/interaction/live.chooserIid', '/interaction/live.chooserIid/chooser') },
    {
      weight: 4,
      arbitrary: fc.constantFrom(
        '/account',
        '/account/choose',
        '/account/signed-out',
        '/account/signin',
        '/account/apps/revoke',
        '/account/password',
        '/account/picture',
        '/account/picture-url',
        '/account/picture/remove',
        '/account/profile',
        '/account/signout',
        '/account/signout-everywhere',
        '/account/verify-email',
        '/oauth/logout',
        '/oauth/logout/confirm',
        '/password/forgot',
        '/password/forgot/sent',
        '/password/reset',
        '/password/reset/done',
        '/verify-email',
        '/pictures/live.platform/live.user/1',
        '/dev/outbox',
        '/dev/outbox/x/html',
      ),
    },
    {
      weight: 2,
      arbitrary: fc
        .tuple(
          fc.constantFrom('/interaction/', '/avatars/live.platform/', '/oauth/', '/static/', '/', '/.well-known/'),
          segment(),
        )
        .map(([a, b]) => a + b),
    },
    { weight: 1, arbitrary: fc.constantFrom('/healthz', '/readyz', '/avatars/live.platform/live.user.svg') },
  );

const CONTENT_TYPES = [
  undefined,
  'application/x-www-form-urlencoded',
  'application/x-www-form-urlencoded; charset=utf-8',
  'application/x-www-form-urlencoded; charset=klingon',
  'application/x-www-form-urlencoded; charset=utf-16',
  'application/json',
  'text/plain',
  'multipart/form-data; boundary=x',
  'application/xml',
  'garbage',
  '',
];
const body = () =>
  fc.oneof(
    { weight: 5, arbitrary: formString() },
    { weight: 1, arbitrary: fc.json() },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        '{"a":',
        '{"platform_guid":["x"]}',
        '<xml/>',
        '--x\r\nContent-Disposition: form-data; name="a"\r\n\r\nb\r\n--x--',
      ),
    },
    { weight: 1, arbitrary: fc.integer({ min: 33_000, max: 40_000 }).map((n) => `token=${'A'.repeat(n)}`) },
    {
      weight: 1,
      arbitrary: fc
        .integer({ min: 101, max: 300 })
        .map((n) => Array.from({ length: n }, (_, i) => `p${i}=1`).join('&')),
    },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 64 }).map((a) => Buffer.from(a)) },
  );
const headerValue = () => fc.string({ maxLength: 60 }).map((s) => s.replace(/[^\x20-\x7e]/g, ''));
const authorization = () =>
  fc.oneof(
    fc.constantFrom(
      'Basic',
      'Basic ',
      'Basic %%%',
      'Basic ====',
      'Bearer',
      'Bearer ',
      'Bearer a.b.c',
      'Bearer <script>',
      'Digest x',
      'basic Og==',
      'Basic Og==',
      'Basic OjE6Mg==',
    ),
    fc.tuple(headerValue(), headerValue()).map(([a, b]) => `Basic ${Buffer.from(`${a}:${b}`).toString('base64')}`),
    fc.constant('live.basic'),
    headerValue().map((s) => `Bearer ${s}`),
    headerValue(),
  );
const headers = () =>
  fc.record(
    {
      authorization: authorization(),
      accept: fc.constantFrom(
        'text/html',
        'application/json',
        '*/*',
        'garbage',
        'text/html;q=0.1, application/json',
        '',
      ),
      cookie: fc.oneof(
        { weight: 4, arbitrary: fc.constant('live.cookie') },
        { weight: 2, arbitrary: fc.constant('live.accountCookie') },
        { weight: 1, arbitrary: headerValue().map((s) => `latchkey.sid=${s}`) },
        { weight: 1, arbitrary: fc.constant('latchkey.sid=s%3Aforged.sig') },
      ),
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
    .replace(/live\.platform/g, live.platform)
    .replace(/live\.client/g, live.client)
    .replace(/live\.secret/g, encodeURIComponent(live.secret))
    .replace(/live\.redirect/g, encodeURIComponent(live.redirect))
    .replace(/live\.user/g, live.user)
    .replace(/live\.code/g, live.code)
    .replace(/live\.csrf/g, encodeURIComponent(live.csrf))
    .replace(/live\.iid/g, live.iid)
    .replace(/live\.chooserIid/g, live.chooserIid)
    .replace(/live\.accountCsrf/g, encodeURIComponent(live.accountCsrf))
    .replace(/live\.publicClient/g, live.publicClient);
}

async function send(r: FuzzRequest) {
  const url = materialise(r.path) + (r.query !== undefined ? `?${materialise(r.query)}` : '');
  // Garbage to the left, this run's address last: the address the trusted loopback proxy saw.
  const forwarded = r.headers['x-forwarded-for'];
  let req = app.send(r.method, url, forwarded === undefined ? undefined : materialise(forwarded));
  for (const [name, raw] of Object.entries({ ...r.headers, 'x-forwarded-for': undefined })) {
    if (raw === undefined) continue;
    const v =
      raw === 'live.cookie'
        ? live.cookie
        : raw === 'live.accountCookie'
          ? live.accountCookie
          : raw === 'live.basic'
            ? `Basic ${Buffer.from(`${live.client}:${encodeURIComponent(live.secret)}`).toString('base64')}`
            : materialise(raw);
    req = req.set(name, v);
  }
  if (r.contentType !== undefined) req = req.set('Content-Type', r.contentType);
  if (r.body !== undefined && r.method !== 'get' && r.method !== 'head')
    req = req.send(typeof r.body === 'string' ? materialise(r.body) : r.body);
  return req;
}

/** A near-valid identifier in one identifier position, sent as a browser or a client would. */
async function sendId(c: IdRequestCase) {
  const raw = materialiseId(c.id, live);
  const r = await POSITIONS[c.position](onTheWire(raw, c.id), raw, live, app.baseUrl);
  let req = app.send(r.method, r.url);
  for (const [name, v] of Object.entries(r.headers)) req = req.set(name, v);
  if (r.form !== undefined) req = req.type('form').send(r.form);
  return { r, res: await req };
}

/** A short account of a request for failure messages (values can be 40 kB long). */
const summary = (r: FuzzRequest) => {
  const cut = (v: unknown) => {
    const x = typeof v === 'string' ? v : Buffer.isBuffer(v) ? `<${v.length} bytes>` : JSON.stringify(v);
    return x && x.length > 300 ? `${x.slice(0, 300)}…(${x.length})` : x;
  };
  return JSON.stringify(
    {
      method: r.method,
      path: cut(r.path),
      query: cut(r.query),
      contentType: r.contentType,
      body: cut(r.body),
      headers: r.headers,
    },
    null,
    1,
  );
};

/** Requests in flight at once: the database works while the app parses the next one (2-core CI in mind). */
const WIDTH = 8;

/**
 * Runs a property over `requests` generated values, WIDTH at a time; on failure, the seed and a
 * short account of the value that failed.
 */
async function run<T>(arb: fc.Arbitrary<T>, requests: number, test: (v: T) => Promise<void>, show: (v: T) => string) {
  const batch = fc.array(arb, { minLength: WIDTH, maxLength: WIDTH });
  const property = fc.asyncProperty(batch, async (values) => {
    await Promise.all(
      values.map((v) =>
        test(v).catch((err: Error) => {
          throw new Error(`${show(v)}\n${String(err?.message ?? err).slice(0, 1500)}`);
        }),
      ),
    );
  });
  const out = await fc.check(property, { numRuns: Math.ceil(requests / WIDTH), endOnFailure: true });
  if (out.failed)
    throw new Error(
      `seed ${out.seed}, after ${out.numRuns} batches of ${WIDTH}:\n${String((out.errorInstance as Error)?.message ?? out.errorInstance)}`,
    );
}

describe('malformed requests at every endpoint (property-based)', () => {
  // First: the general property may sign the account browser out, which would hide the account pages.
  it('near-valid identifiers in every identifier position: never a 5xx, never a query error', async () => {
    const seen = new Set<string>();
    await run(
      idRequest,
      ID_RUNS,
      async (c) => {
        const { r, res } = await sendId(c);
        seen.add(c.position);
        checkAnswer(
          `${c.position}: ${r.method.toUpperCase()} ${r.url.slice(0, 200)} (${c.id.bend} of ${c.id.base})`,
          r.method,
          res,
        );
      },
      (c) => JSON.stringify({ ...c, value: materialiseId(c.id, live) }),
    );
    if (ID_RUNS >= 1000) expect([...seen].sort()).toEqual(Object.keys(POSITIONS).sort());
  }, 300_000);

  it('never answers 5xx, keeps the error format and echoes nothing hostile into HTML', async () => {
    await run(
      requestArb,
      RUNS,
      async (r) => checkAnswer(`${r.method.toUpperCase()} ${r.path}`, r.method, await send(r)),
      summary,
    );
  }, 300_000);

  it(`sent at least ${MIN_REQUESTS.toLocaleString('en')} requests, none answered with a 5xx`, () => {
    expect(stats.serverErrors).toBe(0);
    expect(stats.sent).toBeGreaterThanOrEqual(Math.min(MIN_REQUESTS, RUNS + ID_RUNS));
  });
});
