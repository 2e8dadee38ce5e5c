import type * as Otplib from 'otplib';
import * as mfa from '../../repositories/mfa.repository';
import { normalizeTotpCode } from '../../domain/mfa';
import type { Deps } from '../deps';

/** otplib is required at the first TOTP use, not at start: most instances never enrol one (start time, RSS). */
let otplib: typeof Otplib | undefined;
const totpLib = (): typeof Otplib => (otplib ??= require('otplib') as typeof Otplib);

/** RFC 6238 with the parameters authenticator apps expect: SHA-1, 6 digits, 30 s steps, one step either side accepted. */
const PERIOD = 30;
const TOLERANCE_SECONDS = PERIOD; // ±1 step

export interface TotpEnrolment {
  /** Base32 secret, shown as the "Setup key". */
  secret: string;
  /** otpauth:// URI for the QR code. */
  uri: string;
}

export type TotpCheck = { ok: true; step: number } | { ok: false; reason: 'not_enrolled' | 'invalid' | 'replayed' };

/** The matching time step of `input` for `secret` at `now`, or undefined (also for console operators). */
export function matchTotpStep(secret: string, input: string, now: Date): number | undefined {
  const token = normalizeTotpCode(input);
  if (!token) return undefined;
  const result = totpLib().verifySync({
    secret,
    token,
    epoch: Math.floor(now.getTime() / 1000),
    epochTolerance: TOLERANCE_SECONDS,
    period: PERIOD,
    digits: 6,
    algorithm: 'sha1',
  });
  return result.valid && 'timeStep' in result ? result.timeStep : undefined;
}

/** A new secret and its otpauth:// URI (the QR code) for `label` under `issuer`. */
export function newTotpEnrolment(issuer: string, label: string): TotpEnrolment {
  const secret = totpLib().generateSecret({ length: 20 });
  return {
    secret,
    uri: totpLib().generateURI({ issuer, label, secret, algorithm: 'sha1', digits: 6, period: PERIOD }),
  };
}

/** The otpauth:// URI of an existing secret, to show a pending enrolment again. */
export const totpUri = (issuer: string, label: string, secret: string): string =>
  totpLib().generateURI({ issuer, label, secret, algorithm: 'sha1', digits: 6, period: PERIOD });

/**
 * TOTP as a second factor: enrolment (a pending secret confirmed with a first code),
 * verification that refuses a used step (the step is claimed in the row, so two instances cannot
 * both accept it) and removal. Secrets are sealed under MASTER_KEY.
 */
export function createTotp(deps: Deps) {
  const matchStep = (secret: string, input: string) => matchTotpStep(secret, input, deps.now());

  const unseal = (row: mfa.TotpRow) => deps.sealer.unseal(row.sealedSecret).toString('utf8');

  return {
    /** Whether the user has a confirmed authenticator app, and since when. */
    async status(userId: string): Promise<{ enrolled: boolean; confirmedAt: Date | null }> {
      const row = await mfa.findTotp(deps.db, userId);
      return { enrolled: Boolean(row?.confirmedAt), confirmedAt: row?.confirmedAt ?? null };
    },

    /** Starts (or restarts) an enrolment: a new secret, pending until confirmed. Undefined when one is already confirmed. */
    async beginEnrolment(user: { id: string; email: string }, issuer: string): Promise<TotpEnrolment | undefined> {
      const secret = totpLib().generateSecret({ length: 20 });
      const stored = await mfa.upsertPendingTotp(deps.db, user.id, deps.sealer.seal(secret), deps.now());
      return stored
        ? {
            secret,
            uri: totpLib().generateURI({
              issuer,
              label: user.email,
              secret,
              algorithm: 'sha1',
              digits: 6,
              period: PERIOD,
            }),
          }
        : undefined;
    },

    /** The pending enrolment's secret and URI, to show again (e.g. after a wrong first code). */
    async pendingEnrolment(user: { id: string; email: string }, issuer: string): Promise<TotpEnrolment | undefined> {
      const row = await mfa.findTotp(deps.db, user.id);
      if (!row || row.confirmedAt) return undefined;
      const secret = unseal(row);
      return {
        secret,
        uri: totpLib().generateURI({ issuer, label: user.email, secret, algorithm: 'sha1', digits: 6, period: PERIOD }),
      };
    },

    /** Confirms the pending enrolment with a first code; its step counts as used. */
    async confirmEnrolment(userId: string, code: string): Promise<boolean> {
      const row = await mfa.findTotp(deps.db, userId);
      if (!row || row.confirmedAt) return false;
      const step = matchStep(unseal(row), code);
      return step !== undefined && mfa.confirmTotp(deps.db, userId, step, deps.now());
    },

    /** Checks a code of a confirmed enrolment and uses its step up. */
    async verify(userId: string, code: string): Promise<TotpCheck> {
      const row = await mfa.findTotp(deps.db, userId);
      if (!row?.confirmedAt) return { ok: false, reason: 'not_enrolled' };
      const step = matchStep(unseal(row), code);
      if (step === undefined) return { ok: false, reason: 'invalid' };
      return (await mfa.claimStep(deps.db, userId, step)) ? { ok: true, step } : { ok: false, reason: 'replayed' };
    },

    async remove(userId: string): Promise<void> {
      await mfa.deleteTotp(deps.db, userId);
    },
  };
}

export type Totp = ReturnType<typeof createTotp>;
