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
