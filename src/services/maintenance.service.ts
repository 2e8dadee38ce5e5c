import * as maintenance from '../repositories/maintenance.repository';
import type { Deps } from './deps';
import { RESOURCE_TOKEN_TTL_MAX } from '../domain/resource';

export function createMaintenance(deps: Deps) {
  return {
    /** Readiness (/readyz): the database answers a real query within the time given, else throws. */
    databaseReady(timeoutMs: number): Promise<void> {
      return withTimeout(maintenance.probe(deps.db), timeoutMs);
    },

    /**
     * Expired codes, tokens, sessions, counters and the jti of expired client assertions. Codes are kept a day for replay
     * detection. Sent mails (their body is already gone) are kept a week for support questions
     * ("was it sent?"), dead ones a month for operators (admin mail list / retry). Which apps a
     * browser sign-in reached, and its delivered or failed back-channel logouts, go once no
     * browser session can be that old (SESSION_TTL_SECONDS). A self-registered client that completed
     * no token request within UNUSED_REGISTERED_CLIENT_TTL_SECONDS goes with its codes and consents.
     */
    purgeExpired() {
      const now = deps.now();
      const daysAgo = (days: number) => new Date(now.getTime() - days * 86_400_000);
      const sessionsBefore = new Date(now.getTime() - deps.config.sessionTtlSeconds * 1000);
      const unusedClientsBefore = new Date(now.getTime() - deps.config.unusedRegisteredClientTtlSeconds * 1000);
      // The longest an access token can live: the default lifetime, or a resource's longest.
      const longestAccessSeconds = Math.max(deps.config.accessTokenTtlSeconds, RESOURCE_TOKEN_TTL_MAX);
      const tokensBefore = new Date(now.getTime() - longestAccessSeconds * 1000);
      const refreshIssuedThen = tokensBefore.getTime() + deps.config.refreshTokenTtlSeconds * 1000;
      return maintenance.deleteExpired(
        deps.db,
        now,
        tokensBefore,
        new Date(Math.min(now.getTime(), refreshIssuedThen)),
        daysAgo(1),
        { sentBefore: daysAgo(7), deadBefore: daysAgo(30) },
        sessionsBefore,
        unusedClientsBefore,
      );
    },
  };
}

function withTimeout<T>(p: PromiseLike<T>, ms: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('timeout')), ms);
    Promise.resolve(p).then(
      (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      (e) => {
        clearTimeout(timer);
        reject(e);
      },
    );
  });
}
