import type { Logger } from 'pino';
import type { Config } from '../config';
import type { Metrics } from '../services/metrics';

/**
 * What the HTTP wing reads besides the services: the settings, the clock (tests move it), the
 * logger and the counters. createApp builds it once and hands it to the routers that need it;
 * nothing outside src/services reaches into the services' own dependencies.
 */
export interface HttpDeps {
  config: Config;
  now: () => Date;
  logger: Logger;
  metrics: Metrics;
}
