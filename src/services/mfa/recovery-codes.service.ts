import { randomInt } from 'node:crypto';
import * as mfa from '../../repositories/mfa.repository';
import { digest } from '../../crypto/digest';
import { newId } from '../../crypto/random';
import {
  formatRecoveryCode,
  normalizeRecoveryCode,
  RECOVERY_CODE_ALPHABET,
  RECOVERY_CODE_COUNT,
} from '../../domain/mfa';
import type { Queryable } from '../../db';
import type { Deps } from '../deps';

/** A new set of recovery codes to show once; `replacedEarlier`: unused codes from before stopped working. */
export interface NewRecoveryCodes {
  codes: string[];
  replacedEarlier: boolean;
}

/** One random code: 10 characters of a 31-letter alphabet (about 49 bits), uniform (randomInt). */
const newCode = () =>
  Array.from({ length: 10 }, () => RECOVERY_CODE_ALPHABET[randomInt(RECOVERY_CODE_ALPHABET.length)]).join('');

/**
 * Recovery codes: ten per user, each usable once, stored as SHA-256 (they
 * are random, so no slow hash is needed); the plain codes exist only in the answer that shows them.
 */
export function createRecoveryCodes(deps: Deps) {
  return {
    /**
     * A fresh set replacing every earlier code; returns them formatted to show once, and whether
     * unused earlier codes stopped working (the page says so only then). `also` runs in the same
     * transaction (the audit log).
     */
    async regenerate(userId: string, also?: (trx: Queryable) => Promise<void>): Promise<NewRecoveryCodes> {
      const codes = Array.from({ length: RECOVERY_CODE_COUNT }, newCode);
      const replaced = await deps.db.transaction(async (trx) => {
        const n = await mfa.replaceRecoveryCodes(
          trx,
          userId,
          codes.map((c) => ({ id: newId(), codeHash: digest(c) })),
          deps.now(),
        );
        if (also) await also(trx);
        return n;
      });
      return { codes: codes.map(formatRecoveryCode), replacedEarlier: replaced > 0 };
    },

    /** Uses a code up; false for a wrong or already used one. */
    async use(userId: string, input: string): Promise<boolean> {
      const code = normalizeRecoveryCode(input);
      return code !== undefined && mfa.useRecoveryCode(deps.db, userId, digest(code), deps.now());
    },

    remaining: (userId: string) => mfa.countUnusedRecoveryCodes(deps.db, userId),

    remove: (userId: string) => mfa.deleteRecoveryCodes(deps.db, userId),
  };
}

export type RecoveryCodes = ReturnType<typeof createRecoveryCodes>;
