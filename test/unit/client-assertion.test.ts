import {
  CLIENT_ASSERTION_CLOCK_SKEW_SECONDS as SKEW,
  CLIENT_ASSERTION_MAX_LIFETIME_SECONDS as MAX,
  assertionAudiences,
  assertionClaimsProblem,
  keyFitsAlg,
} from '../../src/domain/client-assertion';

// The pure rules of private_key_jwt (RFC 7523 §3); the HTTP behaviour is test/oauth/private-key-jwt.test.ts.
const NOW = 1_800_000_000;
const ID = '8d3c1f9e-2f4b-4c56-9a1d-0e7b6c5a4f3e';
const AUDIENCES = assertionAudiences('https://id.example', { id: 'p-1', signingProfile: 'standard' });
const valid = { iss: ID, sub: ID, aud: AUDIENCES[0], exp: NOW + 60, iat: NOW, jti: 'j-1' };
const problem = (claims: Record<string, unknown>) =>
  assertionClaimsProblem(claims, { clientId: ID, audiences: AUDIENCES, nowSeconds: NOW });

describe('assertionAudiences', () => {
  it('is the issuer and the token endpoint under it and by query string', () => {
    expect(AUDIENCES).toEqual([
      'https://id.example/platforms/p-1',
      'https://id.example/platforms/p-1/oauth/token',
      'https://id.example/oauth/token?platform_guid=p-1',
    ]);
  });
});

describe('assertionClaimsProblem', () => {
  it('accepts a valid claims set, and each of our audiences', () => {
    expect(problem(valid)).toBeUndefined();
    for (const aud of AUDIENCES) expect(problem({ ...valid, aud })).toBeUndefined();
    expect(problem({ ...valid, aud: ['https://other.example', AUDIENCES[1]] })).toBeUndefined();
  });

  it('allows the clock skew at each bound, and not a second more', () => {
    expect(problem({ ...valid, exp: NOW - SKEW + 1, iat: NOW - 60 })).toBeUndefined();
    expect(problem({ ...valid, exp: NOW - SKEW, iat: NOW - 60 })).toMatch(/expired/);
    expect(problem({ ...valid, iat: NOW + SKEW, exp: NOW + SKEW + 60 })).toBeUndefined();
    expect(problem({ ...valid, iat: NOW + SKEW + 1, exp: NOW + SKEW + 60 })).toMatch(/iat is in the future/);
    expect(problem({ ...valid, nbf: NOW + SKEW })).toBeUndefined();
    expect(problem({ ...valid, nbf: NOW + SKEW + 1 })).toMatch(/not valid yet/);
  });

  it('allows a lifetime of exactly the maximum, not more, with or without iat', () => {
    expect(problem({ ...valid, exp: NOW + MAX })).toBeUndefined();
    expect(problem({ ...valid, exp: NOW + MAX + 1 })).toMatch(/lives longer than 300 seconds/);
    expect(problem({ ...valid, iat: undefined, exp: NOW + MAX + SKEW })).toBeUndefined();
    expect(problem({ ...valid, iat: undefined, exp: NOW + MAX + SKEW + 1 })).toMatch(/too far ahead/);
    // An old iat with a long lifetime is refused even when exp is near.
    expect(problem({ ...valid, iat: NOW - 400, exp: NOW + 10 })).toMatch(/lives longer/);
  });

  it.each([
    ['iss missing', { iss: undefined }, /iss must be/],
    ['sub a number', { sub: 7 }, /sub must be/],
    ['aud missing', { aud: undefined }, /aud must be/],
    ['aud an object', { aud: { a: AUDIENCES[0] } }, /aud must be/],
    ['aud a list of none of ours', { aud: ['https://other.example'] }, /aud must be/],
    ['exp a string', { exp: String(NOW + 60) }, /exp is required/],
    ['iat a string', { iat: 'now' }, /iat must be a NumericDate/],
    ['nbf a string', { nbf: 'now' }, /nbf must be a NumericDate/],
    ['jti a number', { jti: 5 }, /jti is required/],
    ['jti too long', { jti: 'j'.repeat(257) }, /at most 256/],
  ])('%s', (_what, change, reason) => {
    expect(problem({ ...valid, ...change })).toMatch(reason);
  });
});

describe('keyFitsAlg', () => {
  const rsa = { kty: 'RSA', n: 'n', e: 'AQAB' };
  const p256 = { kty: 'EC', crv: 'P-256', x: 'x', y: 'y' };
  const ed = { kty: 'OKP', crv: 'Ed25519', x: 'x' };
  it('matches type and curve to the algorithm', () => {
    expect(keyFitsAlg(rsa, 'RS256')).toBe(true);
    expect(keyFitsAlg(rsa, 'PS256')).toBe(true);
    expect(keyFitsAlg(rsa, 'ES256')).toBe(false);
    expect(keyFitsAlg(p256, 'ES256')).toBe(true);
    expect(keyFitsAlg({ ...p256, crv: 'P-384' }, 'ES256')).toBe(false);
    expect(keyFitsAlg(ed, 'EdDSA')).toBe(true);
    expect(keyFitsAlg({ ...ed, crv: 'X25519' }, 'EdDSA')).toBe(false);
    expect(keyFitsAlg({ kty: 'oct', k: 'c2VjcmV0' }, 'RS256')).toBe(false);
  });
  it("honours the key's own alg, use and key_ops, and never takes a private key", () => {
    expect(keyFitsAlg({ ...rsa, alg: 'RS256' }, 'PS256')).toBe(false);
    expect(keyFitsAlg({ ...rsa, use: 'enc' }, 'RS256')).toBe(false);
    expect(keyFitsAlg({ ...rsa, key_ops: ['encrypt'] }, 'RS256')).toBe(false);
    expect(keyFitsAlg({ ...rsa, key_ops: ['verify'] }, 'RS256')).toBe(true);
    expect(keyFitsAlg({ ...p256, d: 'd' }, 'ES256')).toBe(false);
  });
});
