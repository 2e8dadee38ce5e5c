import { formatUserCode, type IssuedDeviceAuthorization } from '../domain/device-authorization';

/**
 * The device authorization response (RFC 8628 §3.2). The verification URI is the one hosted page
 * for every platform (the user code finds its platform); the complete form carries the code shown
 * as the device shows it, for a QR code or a link.
 */
export function presentDeviceAuthorization(baseUrl: string, d: IssuedDeviceAuthorization) {
  const userCode = formatUserCode(d.userCode);
  const verificationUri = `${baseUrl}/device`;
  return {
    device_code: d.deviceCode,
    user_code: userCode,
    verification_uri: verificationUri,
    verification_uri_complete: `${verificationUri}?user_code=${userCode}`,
    expires_in: d.expiresInSeconds,
    interval: d.intervalSeconds,
  };
}
