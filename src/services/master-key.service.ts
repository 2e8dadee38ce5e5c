import { createSealer } from '../crypto/seal';
import * as sealed from '../repositories/sealed-values.repository';
import type { Deps } from './deps';

/** What the sentinel says: the first start sealed it, or it opens, or only the previous key opens it. */
const SENTINEL_TEXT = 'latchkey master key check';

export class MasterKeyMismatchError extends Error {
  constructor() {
    super(
      'MASTER_KEY does not match this database: it cannot open the values sealed under the key this database was set up with (set the original MASTER_KEY, or MASTER_KEY_PREVIOUS while rotating)',
    );
  }
}

/** Whether `key` opens `value` (GCM authenticates: a wrong key never opens anything). */
const opensAny = (key: string | undefined, value: string) => {
  if (!key) return false;
  try {
    createSealer(key).unseal(value);
    return true;
  } catch {
    return false;
  }
};
const opens = (key: string | undefined, value: string) =>
  opensAny(key, value) && createSealer(key!).unseal(value).toString('utf8') === SENTINEL_TEXT;

/** What a backup holds sealed: its sentinel, or for a backup from before the sentinel, any one sealed value. */
export interface SealedSample {
  sentinel?: string;
  anySealed?: string;
}

/**
 * Whether MASTER_KEY (or MASTER_KEY_PREVIOUS, resealed from at the next start) opens what a
 * backup holds sealed, checked before a restore writes anything; true for a backup with nothing sealed.
 */
export function keysOpenBackup(
  keys: { masterKey?: string; masterKeyPrevious?: string },
  sample: SealedSample,
): boolean {
  if (sample.sentinel !== undefined)
    return opens(keys.masterKey, sample.sentinel) || opens(keys.masterKeyPrevious, sample.sentinel);
  if (sample.anySealed !== undefined)
    return opensAny(keys.masterKey, sample.anySealed) || opensAny(keys.masterKeyPrevious, sample.anySealed);
  return true;
}

/** MASTER_KEY checks and rotation. */
export function createMasterKey(deps: Deps) {
  const { masterKey, masterKeyPrevious } = deps.config;

  /**
   * Reseals every sealed value under MASTER_KEY (values under MASTER_KEY_PREVIOUS are opened with
   * it), in one transaction, the sentinel last. Returns how many values each column held.
   */
  async function resealAll(): Promise<Record<string, number>> {
    return deps.db.transaction(async (trx) => {
      const counts: Record<string, number> = {};
      for (const column of sealed.SEALED_COLUMNS) {
        const rows = await sealed.findSealedForUpdate(trx, column);
        for (const row of rows)
          await sealed.updateSealed(trx, column, row.key, deps.sealer.seal(deps.sealer.unseal(row.sealed)));
        counts[`${column.table}.${column.column}`] = rows.length;
      }
      await sealed.updateSentinel(trx, deps.sealer.seal(SENTINEL_TEXT), deps.now());
      return counts;
    });
  }

  return {
    resealAll,

    /**
     * At start: the first start seals the sentinel; later starts must open it with MASTER_KEY, or
     * with MASTER_KEY_PREVIOUS, in which case everything is resealed under MASTER_KEY now.
     * Throws MasterKeyMismatchError when neither key opens it.
     */
    async verifyAtStart(): Promise<{ resealed?: Record<string, number> }> {
      if (!masterKey) throw new Error('MASTER_KEY is not set');
      let sentinel = await sealed.findSentinel(deps.db);
      if (sentinel === undefined) {
        // A database from before the sentinel: the key must open what is already sealed.
        const existing = await sealed.findAnySealed(deps.db);
        if (existing !== undefined && !opensAny(masterKey, existing)) {
          if (opensAny(masterKeyPrevious, existing)) return { resealed: await resealAll() };
          throw new MasterKeyMismatchError();
        }
        await sealed.insertSentinelIfMissing(deps.db, createSealer(masterKey).seal(SENTINEL_TEXT));
        sentinel = (await sealed.findSentinel(deps.db))!;
      }
      if (opens(masterKey, sentinel)) return {};
      if (opens(masterKeyPrevious, sentinel)) return { resealed: await resealAll() };
      throw new MasterKeyMismatchError();
    },
  };
}

export type MasterKey = ReturnType<typeof createMasterKey>;
