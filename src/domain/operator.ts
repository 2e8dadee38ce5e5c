/**
 * An admin console operator: signs in with a password and a mandatory second factor
 * (TOTP). `platformId` null is global; otherwise the operator sees that one platform only.
 */
export interface Operator {
  id: string;
  email: string;
  platformId: string | null;
  /** The authenticator app is confirmed: sign-in asks for its code, not for an enrolment. */
  hasTotp: boolean;
  createdAt: Date;
  lastSignInAt: Date | null;
  disabledAt: Date | null;
}

/** An operator's passkey (a WebAuthn credential): a second factor of the console, like the app's code. */
export interface OperatorPasskey {
  id: string;
  operatorId: string;
  credentialId: string;
  publicKey: string;
  counter: number;
  transports: string[];
  name: string;
  createdAt: Date;
  lastUsedAt: Date | null;
}
