import type { Logger } from 'pino';
import type { Config } from '../config';
import type { Db } from '../db';
import type { Sealer } from '../crypto/seal';
import type { Metrics } from './metrics';

/** What every service function receives: plain arguments, no container. */
export interface Deps {
  config: Config;
  db: Db;
  logger: Logger;
  sealer: Sealer;
  now: () => Date;
  /** Counters (sign-ins, tokens, reuse, rate-limit hits); the CLI's are never scraped. */
  metrics: Metrics;
}
