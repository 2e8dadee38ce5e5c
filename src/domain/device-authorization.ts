/**
 * The Device Authorization Grant (RFC 8628) of a `standard` platform: a device with no browser (a
 * TV, a CLI) asks for a device code and a user code; the person enters the user code at
 * BASE_URL/device on another device, signs in and approves; the device polls the token endpoint
 * with the device code (docs/decisions.md, "Machine and device clients").
 */

/**
 * RFC 8628 §6.1: twenty consonants, no vowels (no words), none easily confused (no A E I O U Y);
 * 8 of them are 20^8 ≈ 2^34.6 codes. Shown as XXXX-XXXX; typed with or without the dash, any case.
 */
export const USER_CODE_ALPHABET = 'BCDFGHJKLMNPQRSTVWXZ';
export const USER_CODE_LENGTH = 8;

/** RFC 8628 §3.5: a `slow_down` answer adds this to the interval, for that poll and every later one. */
export const SLOW_DOWN_STEP_SECONDS = 5;

/**
 * pending: waiting for the person; approved / denied: they answered; consumed: the device code was
 * redeemed for tokens (single use). Expiry is `expiresAt`, not a status.
 */
export type DeviceAuthorizationStatus = 'pending' | 'approved' | 'denied' | 'consumed';

/** A device authorization as the hosted page finds it by its user code. */
export interface DeviceAuthorization {
  id: string;
  platformId: string;
  clientId: string;
  /** The granted scope (narrowed as at the authorize endpoint), space-separated. */
  scope: string;
  /** The RFC 8707 resources named, with their granted scopes, in the order named (an authorization request's ResourceGrant). */
  resources: { uri: string; scopes: string[] }[];
  status: DeviceAuthorizationStatus;
  expiresAt: Date;
}

/** What the device authorization endpoint hands back (RFC 8628 §3.2), before the presenter names the fields. */
export interface IssuedDeviceAuthorization {
  deviceCode: string;
  /** Normalised: 8 letters of USER_CODE_ALPHABET, no dash. */
  userCode: string;
  expiresInSeconds: number;
  intervalSeconds: number;
}

/** The interaction's mark that it ends in a device's approval, not a redirect to the client. */
export interface DeviceInteraction {
  authorizationId: string;
  /** As shown to the person (XXXX-XXXX), so the consent page can ask them to compare it with the device. */
  userCode: string;
}

/**
 * A typed user code in its stored form: upper case, without spaces or dashes (RFC 8628 §6.1 asks
 * the server to forgive both); undefined when what is left is not 8 letters of the alphabet.
 */
export function normalizeUserCode(input: string): string | undefined {
  const code = input.toUpperCase().replace(/[\s\-‐‑‒–—]/g, '');
  if (code.length !== USER_CODE_LENGTH) return undefined;
  return [...code].every((c) => USER_CODE_ALPHABET.includes(c)) ? code : undefined;
}

/** XXXX-XXXX: how the code is shown on the device and on the page. */
export const formatUserCode = (code: string): string => `${code.slice(0, 4)}-${code.slice(4)}`;
