import fc from 'fast-check';
import { SignJWT } from 'jose';
import type { Live, Method } from './fuzz-fixtures';

/**
 * Identifiers that look almost like ours: each is a real id of the run (or a random
 * UUID) bent one way — 36 dashes, a non-hex character, white space or a NUL byte around it, upper
 * case, braces, too long or short, Unicode lookalikes — or a well-formed id nobody issued.
 */
type Base = 'platform' | 'client' | 'publicClient' | 'user' | 'random';

const HEX = '0123456789abcdef';
/** Characters that pass for hex digits or dashes to a reader: full-width, Cyrillic, Greek, dash variants. */
const LOOKALIKE: Record<string, string[]> = {
  '0': ['O', 'o', '\uff10', '\u039f', '\u043e'],
  '1': ['l', 'I', '\uff11'],
  '3': ['\u0417', '\uff13'],
  '5': ['S', '\uff15'],
  '6': ['\u0431'],
  a: ['\u0430', '\u03b1', '\uff41'],
  b: ['\u0184', '\uff42'],
  c: ['\u0441', '\u03f2'],
  e: ['\u0435', '\u03b5'],
  f: ['\u0192'],
  d: ['\u0501'],
  '-': ['\u2010', '\u2011', '\u2012', '\u2013', '\u2212', '\ufe63', '\uff0d', '\u00ad', '_'],
};
const PADDING = [' ', '  ', '\n', '\r\n', '\t', '\0', '\u00a0', '\u200b', '\ufeff', '\u2028', '+', '%'];

const at = (s: string, i: number, ch: string) => s.slice(0, i) + ch + s.slice(i + 1);

/** One way to bend an id; `n` and `m` pick positions and variants. */
const BENDS: Record<string, (id: string, n: number, m: number) => string> = {
  dashes: () => '-'.repeat(36),
  dashesAndHex: (_id, n, m) =>
    Array.from({ length: 36 }, (_, i) => ('-' + HEX + 'ABCDEF')[(n * 31 + m * 17 + i * i) % 23]).join(''),
  nonHex: (id, n, m) => at(id, [0, 7, 9, 14, 19, 24, 35][n % 7], 'gGzZ_.!x~ '[m % 10]),
  upper: (id) => id.toUpperCase(),
  mixedCase: (id, n) => id.replace(/[a-f]/g, (ch, i: number) => ((i + n) % 2 ? ch.toUpperCase() : ch)),
  braces: (id) => `{${id}}`,
  urn: (id) => `urn:uuid:${id}`,
  noDashes: (id) => id.replace(/-/g, ''),
  /** 36 characters of hex and dashes, the dashes in the wrong places. */
  movedDashes: (id, n) => {
    const hex = id.replace(/-/g, '');
    const cut = 1 + (n % 7);
    return `${hex.slice(0, cut)}-${hex.slice(cut, 20)}-${hex.slice(20)}--`;
  },
  leading: (id, n) => PADDING[n % PADDING.length] + id,
  trailing: (id, n) => id + PADDING[n % PADDING.length],
  nulInside: (id, n) => id.slice(0, n % 37) + '\0' + id.slice(n % 37),
  tooLong: (id, n) => id + HEX[n % 16].repeat(1 + (n % 3)),
  doubled: (id) => id + id,
  tooShort: (id, n) => id.slice(0, 35 - (n % 8)),
  lookalike: (id, n) => {
    const spots = [...id].map((ch, i) => (LOOKALIKE[ch] ? i : -1)).filter((i) => i >= 0);
    const i = spots[n % spots.length];
    const options = LOOKALIKE[id[i]];
    return at(id, i, options[n % options.length]);
  },
  nil: () => '00000000-0000-0000-0000-000000000000',
  max: () => 'ffffffff-ffff-ffff-ffff-ffffffffffff',
  unknown: (id) => id, // well-formed, issued to nobody (the base is then a random UUID)
};

export const nearValidId = fc
  .record({
    base: fc.constantFrom<Base>('platform', 'client', 'publicClient', 'user', 'random', 'random'),
    random: fc.uuid(),
    bend: fc.constantFrom(...Object.keys(BENDS)),
    n: fc.nat(1000),
    m: fc.nat(1000),
    /** Now and then the value is sent with a broken escape right after it. */
    brokenEscape: fc.option(fc.constantFrom('%', '%zz', '%C3%28', '%FF', '%E0%80%AF'), { freq: 12, nil: undefined }),
  })
  .map((v) => ({ ...v, base: v.bend === 'unknown' ? ('random' as const) : v.base }));
export type NearValid = typeof nearValidId extends fc.Arbitrary<infer T> ? T : never;

/** The bent value against this run's fixtures, never the untouched id itself. */
export function materialiseId(v: NearValid, live: Live): string {
  const id = v.base === 'random' ? v.random : live[v.base];
  const bent = BENDS[v.bend](id, v.n, v.m);
  return bent === id && v.bend !== 'unknown' ? `${id}g` : bent;
}

/** A request with the value in one identifier position. */
export interface IdRequest {
  method: Method;
  url: string;
  headers: Record<string, string>;
  form?: string;
}

const enc = encodeURIComponent;
const q = (params: Record<string, string>) =>
  Object.entries(params)
    .map(([k, v]) => `${k}=${v}`)
    .join('&');
const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${enc(id)}:${enc(secret)}`).toString('base64')}`;
const jwt = (claims: Record<string, unknown>, key: Uint8Array, kid?: string) =>
  new SignJWT({ iat: Math.floor(Date.now() / 1000), exp: Math.floor(Date.now() / 1000) + 600, ...claims })
    .setProtectedHeader(kid === undefined ? { alg: 'HS512' } : { alg: 'HS512', kid })
    .sign(key);

/**
 * Every place an identifier from outside enters. `x` is the value already on the wire
 * (percent-encoded, perhaps with a broken escape); `raw` is the value itself, for headers and JWTs.
 */
export const POSITIONS: Record<
  string,
  (x: string, raw: string, live: Live, issuer: string) => Promise<IdRequest> | IdRequest
> = {
  discoveryPlatform: (x) => ({
    method: 'get',
    url: `/.well-known/openid-configuration?platform_guid=${x}`,
    headers: {},
  }),
  jwksPlatform: (x) => ({ method: 'get', url: `/oauth/jwks?platform_guid=${x}`, headers: {} }),
  userinfoPlatform: (x) => ({
    method: 'get',
    url: `/oauth/userinfo?platform_guid=${x}`,
    headers: { authorization: 'Bearer x.y.z' },
  }),
  tokenPlatformBody: (x, _r, l) => ({
    method: 'post',
    url: '/oauth/token',
    headers: { authorization: basic(l.client, l.secret) },
    form: q({ platform_guid: x, grant_type: 'authorization_code', code: enc(l.code), redirect_uri: enc(l.redirect) }),
  }),
  tokenPlatformQuery: (x, _r, l) => ({
    method: 'post',
    url: `/oauth/token?platform_guid=${x}`,
    headers: {},
    form: q({ grant_type: 'refresh_token', refresh_token: 'rt_x', client_id: l.publicClient }),
  }),
  tokenPlatformBoth: (x, _r, l) => ({
    method: 'post',
    url: `/oauth/token?platform_guid=${l.platform}`,
    headers: {},
    form: q({ platform_guid: x, grant_type: 'refresh_token', refresh_token: 'rt_x' }),
  }),
  introspectPlatform: (x, _r, l) => ({
    method: 'post',
    url: '/oauth/introspect',
    headers: { authorization: basic(l.client, l.secret) },
    form: q({ platform_guid: x, token: 'x' }),
  }),
  revokePlatform: (x) => ({
    method: 'post',
    url: '/oauth/revoke',
    headers: {},
    form: q({ platform_guid: x, token: 'x' }),
  }),
  authorizePlatform: (x, _r, l) => ({
    method: 'get',
    url: `/oauth/authorize?${q({ platform_guid: x, client_id: l.client, redirect_uri: enc(l.redirect), response_type: 'code', scope: 'openid' })}`,
    headers: {},
  }),
  authorizeClient: (x, _r, l) => ({
    method: 'get',
    url: `/oauth/authorize?${q({ platform_guid: l.platform, client_id: x, redirect_uri: enc(l.redirect), response_type: 'code', scope: 'openid' })}`,
    headers: {},
  }),
  authorizeClientPost: (x, _r, l) => ({
    method: 'post',
    url: '/oauth/authorize',
    headers: {},
    form: q({
      platform_guid: l.platform,
      client_id: x,
      redirect_uri: enc(l.redirect),
      response_type: 'code',
      scope: 'openid',
    }),
  }),
  tokenBasicClient: (_x, raw, l) => ({
    method: 'post',
    url: '/oauth/token',
    headers: { authorization: basic(raw, l.secret) },
    form: q({
      platform_guid: l.platform,
      grant_type: 'authorization_code',
      code: enc(l.code),
      redirect_uri: enc(l.redirect),
    }),
  }),
  tokenBodyClient: (x, _r, l) => ({
    method: 'post',
    url: '/oauth/token',
    headers: {},
    form: q({
      platform_guid: l.platform,
      client_id: x,
      client_secret: enc(l.secret),
      grant_type: 'refresh_token',
      refresh_token: 'rt_x',
    }),
  }),
  tokenPublicClient: (x, _r, l) => ({
    method: 'post',
    url: '/oauth/token',
    headers: {},
    form: q({
      platform_guid: l.platform,
      client_id: x,
      grant_type: 'authorization_code',
      code: 'c',
      redirect_uri: enc(l.redirect),
      code_verifier: 'v'.repeat(43),
    }),
  }),
  introspectClient: (_x, raw, l) => ({
    method: 'post',
    url: '/oauth/introspect',
    headers: { authorization: basic(raw, 'x') },
    form: q({ platform_guid: l.platform, token: 'x' }),
  }),
  revokeClient: (x, _r, l) => ({
    method: 'post',
    url: '/oauth/revoke',
    headers: {},
    form: q({ platform_guid: l.platform, client_id: x, client_secret: 'x', token: 'x' }),
  }),
  logoutPlatform: (x) => ({ method: 'get', url: `/oauth/logout?platform_guid=${x}`, headers: {} }),
  logoutClient: (x, _r, l) => ({
    method: 'get',
    url: `/oauth/logout?platform_guid=${l.platform}&client_id=${x}&post_logout_redirect_uri=${enc(l.redirect)}`,
    headers: {},
  }),
  interactionPath: (x, _r, l) => ({ method: 'get', url: `/interaction/${x}`, headers: { cookie: l.cookie } }),
  interactionForm: (x, _r, l) => ({
    method: 'post',
    url: `/interaction/${x}/signin`,
    headers: { cookie: l.cookie },
    form: q({ _csrf: enc(l.csrf), email: 'a%40b.example', password: 'x' }),
  }),
  interactionLink: (x, _r, l) => ({
    method: 'get',
    url: `/interaction/${x}/${['signin', 'signup', 'chooser', 'forgot'][x.length % 4]}`,
    headers: { cookie: l.accountCookie },
  }),
  chooserAccount: (x, _r, l) => ({
    method: 'post',
    url: `/interaction/${l.chooserIid}/chooser`,
    headers: { cookie: l.accountCookie },
    form: q({ _csrf: enc(l.accountCsrf), account: x }),
  }),
  chooserSignout: (x, _r, l) => ({
    method: 'post',
    url: `/interaction/${l.chooserIid}/chooser`,
    headers: { cookie: l.accountCookie },
    form: q({ _csrf: enc(l.accountCsrf), signout: x }),
  }),
  accountPlatform: (x, _r, l) => ({
    method: 'get',
    url: `/account?platform_guid=${x}`,
    headers: { cookie: l.accountCookie, accept: 'text/html' },
  }),
  accountChoose: (x, _r, l) => ({
    method: 'post',
    url: `/account/choose?platform_guid=${l.platform}`,
    headers: { cookie: l.accountCookie },
    form: q({ _csrf: enc(l.accountCsrf), account: x }),
  }),
  accountRevokeApp: (x, _r, l) => ({
    method: 'post',
    url: `/account/apps/revoke?platform_guid=${l.platform}`,
    headers: { cookie: l.accountCookie },
    form: q({ _csrf: enc(l.accountCsrf), account: l.user, client_id: x }),
  }),
  accountFormPlatform: (x, _r, l) => ({
    method: 'post',
    url: `/account/profile?platform_guid=${x}`,
    headers: { cookie: l.accountCookie },
    form: q({ _csrf: enc(l.accountCsrf), account: x }),
  }),
  avatarPlatform: (x, _r, l) => ({ method: 'get', url: `/avatars/${x}/${l.user}.svg`, headers: {} }),
  avatarUser: (x, _r, l) => ({ method: 'get', url: `/avatars/${l.platform}/${x}.svg`, headers: {} }),
  picturePlatform: (x, _r, l) => ({ method: 'get', url: `/pictures/${x}/${l.user}/1`, headers: {} }),
  pictureUser: (x, _r, l) => ({ method: 'get', url: `/pictures/${l.platform}/${x}/1`, headers: {} }),
  verifyEmailLink: (x, _r, l) => ({
    method: 'get',
    url: `/verify-email?platform_guid=${[x, l.platform][x.length % 2]}&token=${x}`,
    headers: {},
  }),
  resetLink: (x, _r, l) => ({
    method: 'get',
    url: `/password/reset?platform_guid=${[x, l.platform][x.length % 2]}&token=${x}`,
    headers: {},
  }),
  forgotPlatform: (x) => ({
    method: 'post',
    url: `/password/forgot?platform_guid=${x}`,
    headers: {},
    form: 'email=a%40b.example',
  }),
  /** A forged access token whose header names the value as kid (and whose claims name it as client and subject). */
  userinfoKid: async (_x, raw) => ({
    method: 'get',
    url: '/oauth/userinfo',
    headers: { authorization: `Bearer ${await jwt({ sub: raw, client_id: raw, jti: 'j' }, new Uint8Array(64), raw)}` },
  }),
  userinfoKidOnPlatform: async (_x, raw, l) => ({
    method: 'post',
    url: `/oauth/userinfo?platform_guid=${l.platform}`,
    headers: { authorization: `Bearer ${await jwt({ sub: raw, jti: 'j' }, new Uint8Array(64), raw)}` },
  }),
  introspectKid: async (_x, raw, l) => ({
    method: 'post',
    url: '/oauth/introspect',
    headers: { authorization: basic(l.client, l.secret) },
    form: q({ platform_guid: l.platform, token: await jwt({ sub: raw }, new Uint8Array(64), raw) }),
  }),
  /** An id_token_hint signed with the live client's secret — a valid signature — naming the value as sub. */
  authorizeHintSub: async (_x, raw, l, iss) => ({
    method: 'get',
    headers: { cookie: l.accountCookie },
    url: `/oauth/authorize?${q({ platform_guid: l.platform, client_id: l.client, redirect_uri: enc(l.redirect), response_type: 'code', scope: 'openid', prompt: ['none', 'login', 'consent'][raw.length % 3], id_token_hint: await jwt({ iss, sub: raw, aud: l.client }, new TextEncoder().encode(l.secret)) })}`,
  }),
  authorizeHintAud: async (_x, raw, l, iss) => ({
    method: 'get',
    headers: {},
    url: `/oauth/authorize?${q({ platform_guid: l.platform, client_id: l.client, redirect_uri: enc(l.redirect), response_type: 'code', scope: 'openid', id_token_hint: await jwt({ iss, sub: l.user, aud: raw }, new TextEncoder().encode(l.secret)) })}`,
  }),
  /** A public client's hint is checked with the platform key its kid names. */
  authorizeHintKid: async (_x, raw, l, iss) => ({
    method: 'get',
    headers: {},
    url: `/oauth/authorize?${q({ platform_guid: l.platform, client_id: l.publicClient, redirect_uri: enc(l.redirect), response_type: 'code', scope: 'openid', code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256', id_token_hint: await jwt({ iss, sub: raw, aud: l.publicClient }, new Uint8Array(64), raw) })}`,
  }),
  logoutHintSub: async (_x, raw, l, iss) => ({
    method: 'get',
    headers: { cookie: l.accountCookie },
    url: `/oauth/logout?platform_guid=${l.platform}&id_token_hint=${await jwt({ iss, sub: raw, aud: l.client }, new TextEncoder().encode(l.secret))}`,
  }),
  logoutHintAud: async (_x, raw, l, iss) => ({
    method: 'get',
    headers: {},
    url: `/oauth/logout?platform_guid=${l.platform}&id_token_hint=${await jwt({ iss, sub: l.user, aud: raw }, new TextEncoder().encode(l.secret))}`,
  }),
};

export const idRequest = fc.record({ position: fc.constantFrom(...Object.keys(POSITIONS)), id: nearValidId });
export type IdRequestCase = typeof idRequest extends fc.Arbitrary<infer T> ? T : never;

/** The value's wire form: percent-encoded, with a broken escape after it when asked. */
export const onTheWire = (raw: string, v: NearValid) => enc(raw) + (v.brokenEscape ?? '');
