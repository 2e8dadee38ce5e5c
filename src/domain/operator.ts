/**
 * An admin console operator (DESIGN §14): signs in with a password and a mandatory second factor
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
