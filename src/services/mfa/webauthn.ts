import { isIP } from 'node:net';
import type {
  AuthenticationResponseJSON,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
  RegistrationResponseJSON,
} from '@simplewebauthn/server';

/** Loaded at the first passkey ceremony, not at start: most instances never see one (start time, RSS). */
const simpleWebAuthn = () => import('@simplewebauthn/server');

/**
 * The @simplewebauthn/server calls shared by users' passkeys (passkeys.service.ts) and operators'
 * (admin/operator-passkeys.service.ts): one relying party, one timeout, one way to read the
 * browser's JSON and to store what a registration returns.
 */

/** The WebAuthn relying party of this provider: BASE_URL's host and origin. */
export interface RelyingParty {
  rpId: string;
  origin: string;
  /** False for an IP BASE_URL: browsers refuse an IP address as RP id, so the passkey buttons are hidden. */
  isAvailable: boolean;
}

export function relyingPartyOf(baseUrl: string): RelyingParty {
  const url = new URL(baseUrl);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  return { rpId: host, origin: url.origin, isAvailable: isIP(host) === 0 };
}

/** How long a ceremony's challenge may wait for the browser (conditional UI waits on the page). */
export const CHALLENGE_TTL_SECONDS = 600;
const TIMEOUT_MS = 300_000;

/** A stored credential as the ceremonies need it. */
export interface StoredCredential {
  credentialId: string;
  publicKey: string;
  counter: number;
  transports: string[];
}

const descriptor = (c: Pick<StoredCredential, 'credentialId' | 'transports'>) => ({
  id: c.credentialId,
  transports: c.transports as never,
});

/** The browser's JSON (a hidden form field) as the library's response type; undefined when it is not one. */
export function parseCredential<T>(json: string): T | undefined {
  try {
    const value = JSON.parse(json) as Record<string, unknown> | null;
    const ok =
      value &&
      typeof value === 'object' &&
      typeof value.id === 'string' &&
      typeof value.rawId === 'string' &&
      value.type === 'public-key' &&
      value.response &&
      typeof value.response === 'object';
    return ok ? (value as T) : undefined;
  } catch {
    return undefined;
  }
}

/** Options for navigator.credentials.create: a discoverable credential, attestation none, `existing` excluded. */
export async function registrationOptions(
  rp: RelyingParty,
  input: { rpName: string; userName: string; userId: string; displayName: string; existing: StoredCredential[] },
): Promise<PublicKeyCredentialCreationOptionsJSON> {
  const { generateRegistrationOptions } = await simpleWebAuthn();
  return generateRegistrationOptions({
    rpName: input.rpName,
    rpID: rp.rpId,
    userName: input.userName,
    // The user handle is an id (no personal data); the browser returns it at a passwordless sign-in.
    userID: new TextEncoder().encode(input.userId),
    userDisplayName: input.displayName,
    timeout: TIMEOUT_MS,
    attestationType: 'none',
    excludeCredentials: input.existing.map(descriptor),
    // A passkey: discoverable, so it can sign in without an email; verification is checked at sign-in.
    authenticatorSelection: { residentKey: 'required', userVerification: 'preferred' },
  });
}

/** What a verified registration stores. */
export interface VerifiedRegistration {
  credentialId: string;
  publicKey: string;
  counter: number;
  transports: string[];
  isBackupEligible: boolean;
  isBackedUp: boolean;
  aaguid: string;
}

/** Verifies the browser's answer to registrationOptions; undefined (logged) when it is not a valid one. */
export async function verifyRegistration(
  rp: RelyingParty,
  credential: string,
  expectedChallenge: string,
  log: (err: string) => void,
): Promise<VerifiedRegistration | undefined> {
  const response = parseCredential<RegistrationResponseJSON>(credential);
  if (!response) return undefined;
  const { verifyRegistrationResponse } = await simpleWebAuthn();
  let verified;
  try {
    verified = await verifyRegistrationResponse({
      response,
      expectedChallenge,
      expectedOrigin: rp.origin,
      expectedRPID: rp.rpId,
      requireUserVerification: false,
    });
  } catch (err) {
    log((err as Error).message);
    return undefined;
  }
  if (!verified.verified) return undefined;
  const info = verified.registrationInfo;
  return {
    credentialId: info.credential.id,
    publicKey: Buffer.from(info.credential.publicKey).toString('base64url'),
    counter: info.credential.counter,
    transports: (response.response.transports ?? []).filter((t) => /^[a-z-]{1,16}$/.test(t)).slice(0, 8),
    isBackupEligible: info.credentialDeviceType === 'multiDevice',
    isBackedUp: info.credentialBackedUp,
    aaguid: info.aaguid,
  };
}

/** Options for navigator.credentials.get: `allow` (empty: any discoverable passkey of this RP). */
export async function authenticationOptions(
  rp: RelyingParty,
  allow: StoredCredential[],
  userVerification: 'preferred' | 'required',
): Promise<PublicKeyCredentialRequestOptionsJSON> {
  const { generateAuthenticationOptions } = await simpleWebAuthn();
  return generateAuthenticationOptions({
    rpID: rp.rpId,
    timeout: TIMEOUT_MS,
    allowCredentials: allow.map(descriptor),
    userVerification,
  });
}

/**
 * Verifies an assertion of `stored` (the library checks the signature, challenge, origin, RP id and
 * that the counter went up when the authenticator keeps one). Throws the library's error.
 */
export async function verifyAssertion(
  rp: RelyingParty,
  response: AuthenticationResponseJSON,
  stored: StoredCredential,
  expectedChallenge: string,
  requireUserVerification: boolean,
) {
  const { verifyAuthenticationResponse } = await simpleWebAuthn();
  const verified = await verifyAuthenticationResponse({
    response,
    expectedChallenge,
    expectedOrigin: rp.origin,
    expectedRPID: rp.rpId,
    credential: {
      id: stored.credentialId,
      publicKey: Buffer.from(stored.publicKey, 'base64url'),
      counter: stored.counter,
      transports: stored.transports as never,
    },
    requireUserVerification,
  });
  return verified.verified ? verified.authenticationInfo : undefined;
}
