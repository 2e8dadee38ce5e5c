import {
  seedAccessTokenClaims,
  standardAccessTokenClaims,
  type AccessTokenFacts,
} from '../../src/domain/access-token-claims';

const facts: AccessTokenFacts = {
  iss: 'https://id.example/platforms/p',
  sub: 'u-1',
  clientId: 'c-1',
  audience: 'c-1',
  scope: 'openid email',
  jti: 'j-1',
  iat: 1000,
  exp: 4600,
  authTime: 900,
  amr: 'pwd otp',
  acr: 'urn:example:mfa',
};

describe('standard access-token claims (RFC 9068 §2.2)', () => {
  it('are the required claims, scope, auth_time, acr and amr (as a list), and nothing else', () => {
    expect(standardAccessTokenClaims(facts)).toEqual({
      iss: facts.iss,
      exp: 4600,
      aud: 'c-1',
      sub: 'u-1',
      client_id: 'c-1',
      iat: 1000,
      jti: 'j-1',
      scope: 'openid email',
      auth_time: 900,
      acr: 'urn:example:mfa',
      amr: ['pwd', 'otp'],
    });
  });

  it('name the audience given (a resource), and leave out an empty scope and an unknown acr and amr', () => {
    const claims = standardAccessTokenClaims({
      ...facts,
      audience: 'https://api.example',
      scope: '',
      amr: null,
      acr: null,
    });
    expect(claims.aud).toBe('https://api.example');
    expect(Object.keys(claims)).toEqual(['iss', 'exp', 'aud', 'sub', 'client_id', 'iat', 'jti', 'auth_time']);
  });
});

describe('standard access-token claims without a person signing in, or acting for one (RFC 6749 §4.4, RFC 8693 §4.1)', () => {
  it('a client credentials token: sub the client, no auth_time, acr or amr', () => {
    const claims = standardAccessTokenClaims({ ...facts, sub: 'c-1', authTime: undefined, amr: null, acr: null });
    expect(claims).toMatchObject({ sub: 'c-1', client_id: 'c-1' });
    expect(Object.keys(claims)).toEqual(['iss', 'exp', 'aud', 'sub', 'client_id', 'iat', 'jti', 'scope']);
  });

  it('an exchanged token carries act last, nested as given', () => {
    const act = { sub: 'c-2', act: { sub: 'c-3' } };
    const claims = standardAccessTokenClaims({ ...facts, act });
    expect(Object.keys(claims).at(-1)).toBe('act');
    expect(claims.act).toEqual(act);
  });
});

describe('seed access-token claims', () => {
  it("are the spec's, in its order, with the client as aud whatever audience is given", () => {
    expect(Object.entries(seedAccessTokenClaims({ ...facts, audience: 'https://api.example' }))).toEqual([
      ['iss', facts.iss],
      ['sub', 'u-1'],
      ['human_guid', 'u-1'],
      ['aud', 'c-1'],
      ['client_id', 'c-1'],
      ['scope', 'openid email'],
      ['jti', 'j-1'],
      ['iat', 1000],
      ['exp', 4600],
      ['token_type', 'Bearer'],
    ]);
  });
});
