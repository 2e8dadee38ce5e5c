/**
 * The audit log's vocabulary. Security events are written by the flows that cause
 * them; admin changes by the admin services. Details never hold a secret (no password, code,
 * token, TOTP secret or client secret; an email is not a secret).
 */
export const AUDIT_EVENT_KINDS = [
  // security events
  'sign_in.succeeded',
  'sign_in.failed',
  'sign_in.locked_out',
  'sign_up',
  'email.verified',
  'password.reset_requested',
  'password.reset',
  'password.changed',
  'mfa.enrolled',
  'mfa.removed',
  'mfa.used',
  'consent.granted',
  'consent.revoked',
  'refresh_token.reuse_detected',
  'logout',
  'sign_out_everywhere',
  'identity.linked',
  'identity.unlinked',
  'client_metadata.fetch_failed',
  'client_metadata.refused',
  'client.jwks_fetch_failed',
  // RFC 8628: a device asked, the person answered on the device page, the device got its tokens
  'device_authorization.requested',
  'device_authorization.approved',
  'device_authorization.denied',
  'device_authorization.token_issued',
  // grants no person is present for: the only trail of what a client obtained (RFC 6749 §4.4, RFC 8693)
  'client_credentials.issued',
  'token.exchanged',
  // admin changes
  'platform.created',
  'platform.updated',
  'client.created',
  'client.updated',
  'client.secret_rotated',
  'client.deleted',
  'client.registered',
  'client.registration_refused',
  'registration_token.created',
  'registration_token.revoked',
  'upstream_provider.created',
  'upstream_provider.updated',
  'upstream_provider.deleted',
  'resource.created',
  'resource.updated',
  'resource.deleted',
  'user.created',
  'user.updated',
  'user.disabled',
  'user.enabled',
  'user.deleted',
  'user.unlocked',
  'user.signed_out',
  'user.session_revoked',
  'user.consent_revoked',
  'user.mfa_reset',
  'user.password_reset_sent',
  'key.rotated',
  'key.retired',
  'rate_limit.changed',
  'throttle.cleared',
  'mail.retried',
  'admin_token.created',
  'admin_token.revoked',
  'operator.created',
  'operator.disabled',
  'operator.enabled',
  'operator.mfa_reset',
  'operator.totp_added',
  'operator.totp_removed',
  'operator.signed_in',
  'operator.sign_in_failed',
  'operator.locked_out',
  'operator.unlocked',
  'operator.passkey_added',
  'operator.passkey_removed',
  'master_key.resealed',
] as const;

export type AuditEventKind = (typeof AUDIT_EVENT_KINDS)[number];

/**
 * anonymous: a caller without an account, known by its source address (a client registering itself, RFC 7591);
 * client: a client authenticated at the token endpoint acting on its own (client credentials, token exchange).
 */
export type AuditActorType = 'user' | 'admin_token' | 'operator' | 'cli' | 'system' | 'anonymous' | 'client';

/** Who acts, and where from: built by the HTTP layer (or the CLI) and handed to the services. */
export interface AuditContext {
  actorType: AuditActorType;
  actorId?: string | null;
  actorName?: string | null;
  source?: string | null;
  userAgent?: string | null;
  requestId?: string | null;
}

export interface AuditEventInput {
  kind: AuditEventKind;
  platformId?: string | null;
  subject?: string | null;
  clientId?: string | null;
  details?: Record<string, unknown>;
}

export interface AuditEvent extends Required<Omit<AuditEventInput, 'details'>> {
  id: string;
  occurredAt: Date;
  actorType: AuditActorType;
  actorId: string | null;
  actorName: string | null;
  source: string | null;
  userAgent: string | null;
  requestId: string | null;
  details: Record<string, unknown>;
}

export interface AuditFilter {
  platformId?: string;
  subject?: string;
  clientId?: string;
  kind?: AuditEventKind;
  actorType?: AuditActorType;
  since?: Date;
  until?: Date;
  /** Events older than this id (the cursor of the previous page). */
  before?: string;
}
