import * as maintenance from '../repositories/maintenance.repository';
import type { Deps } from './deps';

export function createMaintenance(deps: Deps) {
  return {
    /**
     * DESIGN §12: expired codes, tokens, sessions and counters. Codes are kept a day for replay
     * detection. Sent mails (their body is already gone) are kept a week for support questions
     * ("was it sent?"), dead ones a month for operators (admin mail list / retry).
     */
    purgeExpired() {
      const now = deps.now();
      const daysAgo = (days: number) => new Date(now.getTime() - days * 86_400_000);
      return maintenance.deleteExpired(deps.db, now, daysAgo(1), { sentBefore: daysAgo(7), deadBefore: daysAgo(30) });
    },
  };
}
