import { checkLogoutUri, checkSigningAndLogout } from '../../src/services/client-registration';

// Logout URIs (OIDC Back-Channel Logout §2.2, Front-Channel Logout §2) and the ID-token algorithm's rules.
describe('checkLogoutUri', () => {
  it('in production: https anywhere, http only on a loopback host', () => {
    for (const ok of [
      'https://rp.example/bc',
      'https://rp.example:8443/bc?x=1',
      'http://127.0.0.1:9000/bc',
      'http://127.1.2.3/bc',
      'http://[::1]:9000/bc',
      'http://localhost:3001/bc',
      'http://rp.localhost/bc',
    ]) {
      expect(checkLogoutUri('backchannel_logout_uri', ok, true)).toBe(ok);
    }
    for (const bad of [
      'http://rp.example/bc',
      'http://10.0.0.5/bc',
      'http://127.0.0.1.example/bc',
      'http://localhost.example/bc',
    ]) {
      expect(() => checkLogoutUri('backchannel_logout_uri', bad, true)).toThrow(
        /backchannel_logout_uri: .* must use https/,
      );
    }
  });

  it('outside production http is allowed on any host; every other rule holds', () => {
    expect(checkLogoutUri('frontchannel_logout_uri', 'http://rp.example/fc', false)).toBe('http://rp.example/fc');
    expect(() => checkLogoutUri('frontchannel_logout_uri', 'ftp://rp.example/fc', false)).toThrow(
      /must be an http or https URL/,
    );
    expect(() => checkLogoutUri('frontchannel_logout_uri', 'rp.example/fc', false)).toThrow(/not an absolute URL/);
    expect(() => checkLogoutUri('frontchannel_logout_uri', 'https://rp.example/fc#top', false)).toThrow(/fragment/);
  });

  it('null, undefined, "" and blanks clear it; a value is trimmed', () => {
    for (const none of [null, undefined, '', '   '])
      expect(checkLogoutUri('backchannel_logout_uri', none, true)).toBeNull();
    expect(checkLogoutUri('backchannel_logout_uri', ' https://rp.example/bc ', true)).toBe('https://rp.example/bc');
  });
});

describe('checkSigningAndLogout', () => {
  const standard = { signingProfile: 'standard', type: 'confidential', isProduction: false } as const;

  it('leaves out what was not given (an update changes only those)', () => {
    expect(checkSigningAndLogout({}, standard)).toEqual({
      idTokenSignedResponseAlg: undefined,
      backchannelLogoutUri: undefined,
      backchannelLogoutSessionRequired: undefined,
      frontchannelLogoutUri: undefined,
      frontchannelLogoutSessionRequired: undefined,
    });
  });

  it('an algorithm on a seed platform is refused; null (the default) is not', () => {
    expect(() =>
      checkSigningAndLogout({ idTokenSignedResponseAlg: 'RS256' }, { ...standard, signingProfile: 'seed' }),
    ).toThrow(/id_token_signed_response_alg: applies to standard platforms only/);
    expect(
      checkSigningAndLogout({ idTokenSignedResponseAlg: null }, { ...standard, signingProfile: 'seed' })
        .idTokenSignedResponseAlg,
    ).toBeNull();
  });

  it('HS512 needs a confidential client, whether given now or kept from before', () => {
    expect(checkSigningAndLogout({ idTokenSignedResponseAlg: 'HS512' }, standard).idTokenSignedResponseAlg).toBe(
      'HS512',
    );
    expect(() => checkSigningAndLogout({ idTokenSignedResponseAlg: 'HS512' }, { ...standard, type: 'public' })).toThrow(
      /HS512/,
    );
    expect(() => checkSigningAndLogout({}, { ...standard, type: 'public', currentAlg: 'HS512' })).toThrow(/HS512/);
    expect(
      checkSigningAndLogout({ idTokenSignedResponseAlg: 'ES256' }, { ...standard, type: 'public', currentAlg: 'HS512' })
        .idTokenSignedResponseAlg,
    ).toBe('ES256');
  });
});
