import * as maintenance from '../repositories/maintenance.repository';
import type { Deps } from './deps';

export function createMaintenance(deps: Deps) {
  return {
    /** DESIGN §12: expired codes, tokens, sessions and counters. Codes are kept a day for replay detection. */
    purgeExpired() {
      const now = deps.now();
      return maintenance.deleteExpired(deps.db, now, new Date(now.getTime() - 86_400_000));
    },
  };
}
