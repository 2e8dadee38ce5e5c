/** A passkey (WebAuthn credential) of a user, as the account page and the sign-in use it. */
export interface Passkey {
  id: string;
  platformId: string;
  userId: string;
  /** The authenticator's credential id, base64url. */
  credentialId: string;
  /** COSE public key, base64url. */
  publicKey: string;
  counter: number;
  transports: string[];
  name: string;
  isBackupEligible: boolean;
  isBackedUp: boolean;
  aaguid: string | null;
  createdAt: Date;
  lastUsedAt: Date | null;
}

/**
 * RFC 8176 methods a passkey sign-in proves: `hwk` for a key bound to one device, `swk` for a
 * synced (backup-eligible) passkey, whose private key lives in software the platform copies;
 * `user` when the authenticator verified the user (PIN or biometrics).
 */
export function passkeyAmr(passkey: Pick<Passkey, 'isBackupEligible'>, userVerified: boolean): string[] {
  return [passkey.isBackupEligible ? 'swk' : 'hwk', ...(userVerified ? ['user'] : [])];
}

export const PASSKEY_NAME_MAX = 64;
