import { isIP } from 'node:net';
import {
  generateAuthenticationOptions, generateRegistrationOptions, verifyAuthenticationResponse, verifyRegistrationResponse,
  type AuthenticationResponseJSON, type PublicKeyCredentialCreationOptionsJSON, type PublicKeyCredentialRequestOptionsJSON, type RegistrationResponseJSON,
} from '@simplewebauthn/server';
import type { Queryable } from '../../db';
import type { Deps } from '../deps';
import { newId } from '../../crypto/random';
import { invalidRequest } from '../../errors';
import { isUuid } from '../../domain/ids';
import { PASSKEY_NAME_MAX, passkeyAmr, type Passkey } from '../../domain/passkey';
import * as credentials from '../../repositories/webauthn-credential.repository';
import * as users from '../../repositories/user.repository';
import { normalizeEmail } from '../../domain/user';
import { createSecurityEvents, type SecurityOrigin } from '../security-events';

/** The WebAuthn relying party of this provider: BASE_URL's host and origin (DESIGN §15). */
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

type Account = { id: string; email: string; givenName?: string; familyName?: string };
type Tenant = { id: string; name: string };
export type SignedInUser = Omit<users.UserRow, 'passwordHash'>;

export type RegisterResult = { ok: true; passkey: Passkey } | { ok: false; message: string };
export type AuthenticateResult =
  | { ok: true; user: SignedInUser; passkey: Passkey; userVerified: boolean; amr: string[] }
  | { ok: false; message: string };

const FAILED = 'That passkey could not be verified. Try again.';

/** The browser's JSON (a hidden form field) as the library's response type; undefined when it is not one. */
function parseCredential<T>(json: string): T | undefined {
  try {
    const value = JSON.parse(json) as Record<string, unknown> | null;
    const ok = value && typeof value === 'object' && typeof value.id === 'string' && typeof value.rawId === 'string' && value.type === 'public-key' && value.response && typeof value.response === 'object';
    return ok ? (value as T) : undefined;
  } catch {
    return undefined;
  }
}

/** Passkeys (DESIGN §15): register several per account, list, remove; sign in with one alone or after a password. */
export function createPasskeys(deps: Deps) {
  const rp = relyingPartyOf(deps.config.baseUrl);
  const events = createSecurityEvents(deps);
  const requireRp = () => {
    if (!rp.isAvailable) throw invalidRequest('Passkeys need a host name: BASE_URL is an IP address');
  };

  return {
    relyingParty: rp,

    list: (platformId: string, userId: string) => credentials.listByUser(deps.db, platformId, userId),
    count: (platformId: string, userId: string) => credentials.countByUser(deps.db, platformId, userId),

    /** Options for navigator.credentials.create: a discoverable credential, the user's own passkeys excluded. Throws invalid_request on an IP BASE_URL. */
    async registrationOptions(platform: Tenant, user: Account): Promise<PublicKeyCredentialCreationOptionsJSON> {
      requireRp();
      const existing = await credentials.listByUser(deps.db, platform.id, user.id);
      const displayName = [user.givenName, user.familyName].filter(Boolean).join(' ');
      return generateRegistrationOptions({
        rpName: platform.name,
        rpID: rp.rpId,
        userName: user.email,
        // The user handle is the user's id (no personal data); the browser returns it at a passwordless sign-in.
        userID: new TextEncoder().encode(user.id),
        userDisplayName: displayName || user.email,
        timeout: TIMEOUT_MS,
        attestationType: 'none',
        excludeCredentials: existing.map((c) => ({ id: c.credentialId, transports: c.transports as never })),
        // A passkey: discoverable, so it can sign in without an email; verification is checked at sign-in.
        authenticatorSelection: { residentKey: 'required', userVerification: 'preferred' },
      });
    },

    /** Verifies the browser's answer to registrationOptions and stores the passkey under `name`; with `origin`, mfa.enrolled in the same transaction. */
    async register(platform: Tenant, user: Account, input: { name: string; credential: string; expectedChallenge: string }, origin?: SecurityOrigin): Promise<RegisterResult> {
      requireRp();
      const name = input.name.trim().replace(/\s+/g, ' ');
      if (!name) return { ok: false, message: 'Give the passkey a name.' };
      if (name.length > PASSKEY_NAME_MAX) return { ok: false, message: `A passkey's name has at most ${PASSKEY_NAME_MAX} characters.` };
      const response = parseCredential<RegistrationResponseJSON>(input.credential);
      if (!response) return { ok: false, message: 'The passkey was not created. Try again.' };
      let verified;
      try {
        verified = await verifyRegistrationResponse({ response, expectedChallenge: input.expectedChallenge, expectedOrigin: rp.origin, expectedRPID: rp.rpId, requireUserVerification: false });
      } catch (err) {
        deps.logger.info({ err: (err as Error).message }, 'passkey registration refused');
        return { ok: false, message: 'The passkey was not created. Try again.' };
      }
      if (!verified.verified) return { ok: false, message: 'The passkey was not created. Try again.' };
      const info = verified.registrationInfo;
      const passkey: credentials.NewPasskey = {
        id: newId(),
        platformId: platform.id,
        userId: user.id,
        credentialId: info.credential.id,
        publicKey: Buffer.from(info.credential.publicKey).toString('base64url'),
        counter: info.credential.counter,
        transports: (response.response.transports ?? []).filter((t) => /^[a-z-]{1,16}$/.test(t)).slice(0, 8),
        name,
        isBackupEligible: info.credentialDeviceType === 'multiDevice',
        isBackedUp: info.credentialBackedUp,
        aaguid: info.aaguid,
      };
      const at = deps.now();
      const stored = await deps.db.transaction(async (trx) => {
        if (!(await credentials.insert(trx, passkey, at))) return false;
        if (origin) await events.record(trx, origin, 'mfa.enrolled', user.id, { factor: 'passkey', passkey_id: passkey.id, name });
        return true;
      });
      if (!stored) return { ok: false, message: 'This passkey is already registered.' };
      return { ok: true, passkey: { ...passkey, createdAt: at, lastUsedAt: null } };
    },

    /**
     * Options for navigator.credentials.get. Passwordless (no user): any discoverable passkey of
     * this RP, user verification required. Second factor: the user's passkeys, verification preferred.
     */
    async authenticationOptions(platform: Tenant, forUser?: { id: string }): Promise<PublicKeyCredentialRequestOptionsJSON> {
      requireRp();
      const allow = forUser ? await credentials.listByUser(deps.db, platform.id, forUser.id) : [];
      return generateAuthenticationOptions({
        rpID: rp.rpId,
        timeout: TIMEOUT_MS,
        allowCredentials: allow.map((c) => ({ id: c.credentialId, transports: c.transports as never })),
        userVerification: forUser ? 'preferred' : 'required',
      });
    },

    /**
     * Verifies a sign-in assertion: the credential must be registered on this platform (and be
     * `forUser`'s for a second factor, `onlyEmail`'s for a pinned sign-in); a passwordless sign-in needs user verification.
     * The counter and last use are updated in the same transaction as the check. With `origin`,
     * the outcome is audited in that transaction: sign_in.succeeded (passwordless), mfa.used (a
     * second factor) or sign_in.failed.
     */
    async authenticate(platform: Tenant, input: { credential: string; expectedChallenge: string; forUser?: { id: string }; onlyEmail?: string }, origin?: SecurityOrigin): Promise<AuthenticateResult> {
      requireRp();
      const step = input.forUser ? { second_factor: true } : {};
      const failed = async (q: Queryable, reason: string, subject: string | null, message: string): Promise<AuthenticateResult> => {
        if (origin) await events.record(q, origin, 'sign_in.failed', subject, { method: 'passkey', reason, ...step });
        return { ok: false, message };
      };
      const response = parseCredential<AuthenticationResponseJSON>(input.credential);
      if (!response) return failed(deps.db, 'malformed', input.forUser?.id ?? null, FAILED);
      const requireUserVerification = !input.forUser;
      return deps.db.transaction(async (trx) => {
        const passkey = await credentials.findByCredentialIdForUpdate(trx, platform.id, response.id);
        if (!passkey || (input.forUser && passkey.userId !== input.forUser.id)) return failed(trx, 'unknown_passkey', input.forUser?.id ?? null, 'This passkey is not registered for this account.');
        let verified;
        try {
          verified = await verifyAuthenticationResponse({
            response,
            expectedChallenge: input.expectedChallenge,
            expectedOrigin: rp.origin,
            expectedRPID: rp.rpId,
            credential: { id: passkey.credentialId, publicKey: Buffer.from(passkey.publicKey, 'base64url'), counter: passkey.counter, transports: passkey.transports as never },
            requireUserVerification,
          });
        } catch (err) {
          deps.logger.info({ err: (err as Error).message, passkey: passkey.id }, 'passkey sign-in refused');
          const uv = /user could not be verified/i.test((err as Error).message);
          return failed(trx, uv ? 'user_not_verified' : 'invalid', passkey.userId, uv ? 'Your device did not verify you (PIN or biometrics), which a sign-in with a passkey alone requires.' : FAILED);
        }
        if (!verified.verified) return failed(trx, 'invalid', passkey.userId, FAILED);
        const row = await users.findById(trx, platform.id, passkey.userId);
        if (!row) return failed(trx, 'unknown_user', null, FAILED);
        if (row.disabledAt) return failed(trx, 'disabled', row.id, FAILED); // admin user disable: the generic failure
        // login_hint / id_token_hint / re-authentication: another account's passkey signs nobody in.
        if (input.onlyEmail !== undefined && normalizeEmail(row.email) !== normalizeEmail(input.onlyEmail)) return failed(trx, 'other_account', row.id, `This sign-in is for ${input.onlyEmail}.`);
        const { newCounter, userVerified, credentialBackedUp } = verified.authenticationInfo;
        await credentials.markUsed(trx, passkey.id, { counter: newCounter, isBackedUp: credentialBackedUp }, deps.now());
        const { passwordHash: _hash, ...user } = row;
        const amr = passkeyAmr(passkey, userVerified);
        if (origin && input.forUser) await events.record(trx, origin, 'mfa.used', user.id, { factor: 'passkey', passkey_id: passkey.id, amr });
        else if (origin) await events.record(trx, origin, 'sign_in.succeeded', user.id, { method: 'passkey', passkey_id: passkey.id, amr });
        return { ok: true, user, passkey, userVerified, amr } as const;
      });
    },

    /** Removes every passkey of the user (admin user reset-mfa: a lost device); how many there were. */
    removeAll: (platformId: string, userId: string) => credentials.removeAllByUser(deps.db, platformId, userId),

    /** Removes one of the user's passkeys; false when it was not theirs or already gone. With `origin`, mfa.removed in the same transaction. */
    async remove(platformId: string, userId: string, passkeyId: string, origin?: SecurityOrigin): Promise<boolean> {
      if (!isUuid(passkeyId)) return false;
      return deps.db.transaction(async (trx) => {
        const removed = await credentials.remove(trx, platformId, userId, passkeyId);
        if (removed && origin) await events.record(trx, origin, 'mfa.removed', userId, { factor: 'passkey', passkey_id: passkeyId });
        return removed;
      });
    },
  };
}

export type Passkeys = ReturnType<typeof createPasskeys>;
