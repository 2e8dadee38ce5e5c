import {
  ACR_MFA,
  ACR_PWD,
  acrOf,
  acrSatisfies,
  amrOf,
  formatRecoveryCode,
  normalizeRecoveryCode,
  normalizeTotpCode,
} from '../../src/domain/mfa';

describe('amr and acr (RFC 8176)', () => {
  it('adds mfa when two factors were used, once', () => {
    expect(amrOf(['pwd'])).toEqual(['pwd']);
    expect(amrOf(['pwd', 'otp'])).toEqual(['pwd', 'otp', 'mfa']);
    expect(amrOf(['pwd', 'otp', 'mfa', 'otp'])).toEqual(['pwd', 'otp', 'mfa']);
    expect(amrOf(['hwk', 'user'])).toEqual(['hwk', 'user', 'mfa']); // a passkey with user verification
    expect(amrOf(['swk'])).toEqual(['swk']); // a passkey without user verification is one factor
    expect(amrOf(['pwd', 'hwk'])).toEqual(['pwd', 'hwk', 'mfa']);
  });

  it('acr follows mfa; acr_values asks a step-up only for urn:latchkey:acr:mfa', () => {
    expect(acrOf(['pwd'])).toBe(ACR_PWD);
    expect(acrOf(['pwd', 'otp', 'mfa'])).toBe(ACR_MFA);
    expect(acrSatisfies(ACR_PWD, undefined)).toBe(true);
    expect(acrSatisfies(ACR_PWD, `${ACR_PWD}`)).toBe(true);
    expect(acrSatisfies(ACR_PWD, 'urn:other:acr')).toBe(true);
    expect(acrSatisfies(ACR_PWD, `urn:other ${ACR_MFA}`)).toBe(false);
    expect(acrSatisfies(ACR_MFA, ACR_MFA)).toBe(true);
  });
});

describe('codes as typed', () => {
  it('TOTP: six digits, spaces and a dash ignored', () => {
    expect(normalizeTotpCode(' 123 456 ')).toBe('123456');
    expect(normalizeTotpCode('123-456')).toBe('123456');
    expect(normalizeTotpCode('12345')).toBeUndefined();
    expect(normalizeTotpCode('12345a')).toBeUndefined();
    expect(normalizeTotpCode('١٢٣٤٥٦')).toBeUndefined(); // other digits than ASCII
  });

  it('recovery codes: case, spaces and dashes ignored, alphabet checked', () => {
    expect(normalizeRecoveryCode('ABCDE-FGHJK')).toBe('abcdefghjk');
    expect(normalizeRecoveryCode(' abcde fghjk ')).toBe('abcdefghjk');
    expect(normalizeRecoveryCode('abcde-fghj0')).toBeUndefined(); // 0 is not in the alphabet
    expect(normalizeRecoveryCode('abcde')).toBeUndefined();
    expect(formatRecoveryCode('abcdefghjk')).toBe('abcde-fghjk');
  });
});
