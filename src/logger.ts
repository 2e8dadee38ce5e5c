import pino, { type Logger } from 'pino';

export interface LoggerOptions {
  /** Human-readable lines (pino-pretty) instead of JSON: for a developer's terminal. */
  pretty?: boolean;
}

/** JSON logs (pretty ones on a developer's terminal); credentials are redacted wherever they could appear. */
export function createLogger(level: string, options: LoggerOptions = {}): Logger {
  const settings = {
    level,
    redact: {
      // Top level and one level down (pino's wildcard covers one level only).
      paths: [
        'req.headers.authorization',
        'req.headers.cookie',
        'res.headers["set-cookie"]',
        '*.code',
        ...['password', 'client_secret', 'refresh_token', 'access_token', 'id_token'].flatMap((key) => [
          key,
          `*.${key}`,
        ]),
      ],
      censor: '[redacted]',
    },
  };
  if (!options.pretty) return pino(settings);
  // Loaded only when asked for: production never needs it. Synchronous, so nothing is lost at exit.
  const pretty = require('pino-pretty') as typeof import('pino-pretty');
  return pino(
    settings,
    pretty({ colorize: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname', sync: true }),
  );
}

/** `LOG_FORMAT=auto`: pretty outside production when the output is a terminal, JSON otherwise. */
export function wantsPrettyLogs(format: 'auto' | 'json' | 'pretty', isProduction: boolean, isTty: boolean): boolean {
  return format === 'pretty' || (format === 'auto' && !isProduction && isTty);
}
