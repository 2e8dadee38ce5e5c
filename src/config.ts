import { z } from 'zod';
import { CLIENT_SECRET_OVERLAP_MAX_SECONDS } from './domain/client';

/**
 * A number read from the environment. A bad value is refused in plain words, the same for every
 * numeric variable: `must be a whole number from 1 to 65535, got "abc"` (zod's own wording,
 * "expected number, received NaN", names neither the range nor the value).
 */
const numberVar = ({ min, max, whole = true }: { min: number; max?: number; whole?: boolean }) => {
  const rule = `must be ${whole ? 'a whole number' : 'a number'} ${max === undefined ? `of at least ${min}` : `from ${min} to ${max}`}`;
  return z.string().transform((raw, ctx) => {
    const value = Number(raw.trim());
    const fits =
      raw.trim() !== '' &&
      Number.isFinite(value) &&
      (!whole || Number.isInteger(value)) &&
      value >= min &&
      (max === undefined || value <= max);
    if (fits) return value;
    ctx.addIssue({ code: 'custom', message: `${rule}, got ${JSON.stringify(raw)}` });
    return z.NEVER;
  });
};

const seconds = (fallback: number, what: string) => numberVar({ min: 1 }).default(fallback).describe(what);

const booleanish = z.enum(['true', 'false', '1', '0', '']).transform((v) => v === 'true' || v === '1');

/** The one schema over the environment. Keys here are the keys of .env.example. */
export const configSchema = z
  .object({
    NODE_ENV: z.enum(['development', 'production', 'test']).default('development').describe('Runtime mode'),
    PORT: numberVar({ min: 1, max: 65535 }).default(3000).describe('HTTP port'),
    BASE_URL: z
      .url({ protocol: /^https?$/ })
      .optional()
      .describe('Public base URL and issuer, without trailing slash (default http://localhost:PORT)'),
    DATABASE_URL: z
      .string()
      .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// URL')
      .optional()
      .describe('Postgres connection URL; unset uses the embedded database under DATA_DIR'),
    DATABASE_LISTEN_URL: z
      .string()
      .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// URL')
      .optional()
      .describe('Direct Postgres URL for LISTEN/NOTIFY when DATABASE_URL goes through PgBouncer in transaction mode'),
    DATA_DIR: z
      .string()
      .min(1)
      .default('./data')
      .describe('Directory for the embedded database and generated dev secrets'),
    DB_POOL_MAX: numberVar({ min: 1, max: 200 }).default(10).describe('Database connection pool size'),
    DB_STATEMENT_TIMEOUT_MS: numberVar({ min: 0 })
      .default(15000)
      .describe(
        'Longest a database statement may run, in ms (0: no limit); a server that says nothing 1 s past it (hung) is given up on',
      ),
    DB_CONNECT_TIMEOUT_MS: numberVar({ min: 100, max: 120000 })
      .default(5000)
      .describe('Longest a new database connection may take to open, in ms'),
    DB_ACQUIRE_TIMEOUT_MS: numberVar({ min: 100, max: 120000 })
      .default(10000)
      .describe('Longest a request waits for a free connection of the pool, in ms'),
    PLATFORM_CACHE_SIZE: numberVar({ min: 100, max: 1000000 })
      .default(20000)
      .describe(
        'How many platforms each instance keeps cached (settings, signing keys, clients, discovery and JWKS documents); size it to the platforms in use, about 26 KB of memory each',
      ),
    LOG_LEVEL: z
      .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
      .default('info')
      .describe('pino log level'),
    LOG_FORMAT: z
      .enum(['auto', 'json', 'pretty'])
      .default('auto')
      .describe('auto: human-readable on a terminal outside production, JSON otherwise'),
    MASTER_KEY: z
      .string()
      .regex(/^[A-Za-z0-9_-]{43}$/, 'must be 32 random bytes, base64url (43 characters)')
      .optional()
      .describe('AES-256-GCM key sealing client secrets and signing keys (required in production)'),
    MASTER_KEY_PREVIOUS: z
      .string()
      .regex(/^[A-Za-z0-9_-]{43}$/, 'must be 32 random bytes, base64url (43 characters)')
      .optional()
      .describe('The MASTER_KEY being rotated out: rows sealed under it are resealed under MASTER_KEY at start'),
    SESSION_SECRET: z
      .string()
      .min(32, 'must be at least 32 characters')
      .optional()
      .describe('Secret signing session cookies (required in production)'),
    CODE_TTL_SECONDS: seconds(60, 'Authorization code lifetime'),
    ACCESS_TOKEN_TTL_SECONDS: seconds(3600, 'Access token lifetime'),
    REFRESH_TOKEN_TTL_SECONDS: seconds(2592000, 'Refresh token lifetime, renewed on rotation'),
    SESSION_TTL_SECONDS: seconds(1209600, 'Browser session lifetime'),
    CLIENT_SECRET_OVERLAP_SECONDS: numberVar({ min: 0, max: CLIENT_SECRET_OVERLAP_MAX_SECONDS })
      .default(86400)
      .describe(
        'After a client secret rotation, how long the previous secret still authenticates the client (0: not at all; at most 30 days)',
      ),
    SIGNING_KEY_PUBLICATION_SECONDS: numberVar({ min: 0, max: 604800 })
      .default(7200)
      .describe(
        'Standard platforms: how long a rotated-in key is published in the JWKS before it signs (JWKS caches hold it up to an hour; at most 7 days)',
      ),
    REFRESH_REUSE_GRACE_SECONDS: numberVar({ min: 0 })
      .default(10)
      .describe('Window in which a just-rotated refresh token may be presented again'),
    UNUSED_REGISTERED_CLIENT_TTL_SECONDS: seconds(
      604800,
      "Standard platforms: a dynamically registered client, or a client ID metadata document's stored client, that completes no token request within this is deleted by the purge (default 7 days)",
    ),
    DEVICE_CODE_TTL_SECONDS: numberVar({ min: 60, max: 3600 })
      .default(600)
      .describe(
        'Standard platforms: how long a device code and its user code (RFC 8628) wait for the person to approve, in seconds (60 to 3600)',
      ),
    DEVICE_CODE_INTERVAL_SECONDS: numberVar({ min: 1, max: 60 })
      .default(5)
      .describe(
        'Standard platforms: the least time a device waits between polls of the token endpoint (RFC 8628 interval), in seconds; slow_down adds 5',
      ),
    REGISTRATION_PER_HOUR: numberVar({ min: 1, max: 100000 })
      .default(10)
      .describe(
        'Standard platforms: dynamic client registrations (POST {issuer}/oauth/register) per source address per platform per hour, scaled by RATE_LIMIT_SCALE',
      ),
    RATE_LIMIT_SCALE: numberVar({ min: 0, whole: false })
      .default(1)
      .describe('Multiplier for every rate limit; 0 disables limiting'),
    REDIS_URL: z
      .string()
      .regex(/^rediss?:\/\//, 'must be a redis:// URL')
      .optional()
      .describe('Redis for rate-limit counters; unset uses the database'),
    TRUST_PROXY: z
      .string()
      .default('false')
      .describe('Express trust proxy setting: false, true, a hop count or a list of subnets'),
    PASSWORD_MIN_LENGTH: numberVar({ min: 8, max: 256 }).default(8).describe('Minimum password length'),
    ARGON2_MEMORY_KIB: numberVar({ min: 19456 }).default(19456).describe('argon2id memory cost in KiB'),
    ARGON2_TIME_COST: numberVar({ min: 2 }).default(2).describe('argon2id iterations'),
    PURGE_INTERVAL_SECONDS: seconds(300, 'How often expired rows are purged'),
    SHUTDOWN_GRACE_SECONDS: numberVar({ min: 1, max: 3600 })
      .default(10)
      .describe(
        "On SIGTERM/SIGINT, how long in-flight requests may take to finish before their connections are closed (keep it under the orchestrator's own, 30 s for Docker and Kubernetes)",
      ),
    AUDIT_RETENTION_DAYS: numberVar({ min: 1, max: 36500 })
      .default(365)
      .describe('How long audit events are kept, in days'),
    DEMO_SEED: booleanish
      .optional()
      .describe('In development, create a demo platform and client on first start (default true)'),
    SMTP_URL: z
      .string()
      .regex(/^smtps?:\/\//, 'must be an smtp:// or smtps:// URL')
      .optional()
      .describe('SMTP server for outgoing mail (required in production); unset writes mail to DATA_DIR/outbox'),
    MAIL_FROM: z
      .email()
      .optional()
      .describe('Sender address of outgoing mail (default no-reply@ the host of BASE_URL)'),
    MAIL_MAX_ATTEMPTS: numberVar({ min: 1, max: 100 })
      .default(10)
      .describe('Tries before an outgoing mail is marked dead (backoff from 30 s, doubling up to 1 h)'),
    METRICS_TOKEN: z
      .string()
      .min(16, 'must be at least 16 characters')
      .optional()
      .describe('Bearer token for GET /metrics (Prometheus) on PORT; unset: /metrics is 404 there'),
    METRICS_PORT: numberVar({ min: 1, max: 65535 })
      .optional()
      .describe('Port of a second HTTP server serving only /metrics, without a token (keep it private)'),
    ALLOW_PRIVATE_NETWORK_TARGETS: booleanish
      .default(false)
      .describe(
        'In production, let outbound requests (back-channel logout, upstream identity providers) reach loopback, private and link-local addresses; development and test always may',
      ),
    OUTBOUND_CA_FILE: z
      .string()
      .min(1)
      .optional()
      .describe(
        "A PEM file of certificate authorities trusted for the provider's outbound https requests besides the system's (e.g. a corporate CA)",
      ),
  })
  .superRefine((env, ctx) => {
    if (env.METRICS_PORT !== undefined && env.METRICS_PORT === env.PORT)
      ctx.addIssue({ code: 'custom', path: ['METRICS_PORT'], message: 'must differ from PORT' });
    if (env.DATABASE_LISTEN_URL && !env.DATABASE_URL)
      ctx.addIssue({ code: 'custom', path: ['DATABASE_LISTEN_URL'], message: 'needs DATABASE_URL' });
    if (env.NODE_ENV !== 'production') return;
    for (const key of ['MASTER_KEY', 'SESSION_SECRET'] as const) {
      if (!env[key]) ctx.addIssue({ code: 'custom', path: [key], message: 'is required when NODE_ENV=production' });
    }
    if (!env.SMTP_URL)
      ctx.addIssue({ code: 'custom', path: ['SMTP_URL'], message: 'is required when NODE_ENV=production' });
    if (!env.BASE_URL?.startsWith('https://')) {
      ctx.addIssue({ code: 'custom', path: ['BASE_URL'], message: 'must be an https URL when NODE_ENV=production' });
    }
  });

export type Config = ReturnType<typeof toConfig>;

function toConfig(env: z.infer<typeof configSchema>) {
  const baseUrl = (env.BASE_URL ?? `http://localhost:${env.PORT}`).replace(/\/+$/, '');
  return {
    nodeEnv: env.NODE_ENV,
    isProduction: env.NODE_ENV === 'production',
    port: env.PORT,
    baseUrl,
    databaseUrl: env.DATABASE_URL,
    databaseListenUrl: env.DATABASE_LISTEN_URL,
    dataDir: env.DATA_DIR,
    dbPoolMax: env.DB_POOL_MAX,
    dbStatementTimeoutMs: env.DB_STATEMENT_TIMEOUT_MS,
    dbConnectTimeoutMs: env.DB_CONNECT_TIMEOUT_MS,
    dbAcquireTimeoutMs: env.DB_ACQUIRE_TIMEOUT_MS,
    platformCacheSize: env.PLATFORM_CACHE_SIZE,
    logLevel: env.LOG_LEVEL,
    logFormat: env.LOG_FORMAT,
    masterKey: env.MASTER_KEY,
    masterKeyPrevious: env.MASTER_KEY_PREVIOUS,
    sessionSecret: env.SESSION_SECRET,
    codeTtlSeconds: env.CODE_TTL_SECONDS,
    accessTokenTtlSeconds: env.ACCESS_TOKEN_TTL_SECONDS,
    refreshTokenTtlSeconds: env.REFRESH_TOKEN_TTL_SECONDS,
    sessionTtlSeconds: env.SESSION_TTL_SECONDS,
    clientSecretOverlapSeconds: env.CLIENT_SECRET_OVERLAP_SECONDS,
    signingKeyPublicationSeconds: env.SIGNING_KEY_PUBLICATION_SECONDS,
    refreshReuseGraceSeconds: env.REFRESH_REUSE_GRACE_SECONDS,
    rateLimitScale: env.RATE_LIMIT_SCALE,
    registrationPerHour: env.REGISTRATION_PER_HOUR,
    unusedRegisteredClientTtlSeconds: env.UNUSED_REGISTERED_CLIENT_TTL_SECONDS,
    deviceCodeTtlSeconds: env.DEVICE_CODE_TTL_SECONDS,
    deviceCodeIntervalSeconds: env.DEVICE_CODE_INTERVAL_SECONDS,
    redisUrl: env.REDIS_URL,
    trustProxy: parseTrustProxy(env.TRUST_PROXY),
    passwordMinLength: env.PASSWORD_MIN_LENGTH,
    argon2: { memoryCost: env.ARGON2_MEMORY_KIB, timeCost: env.ARGON2_TIME_COST },
    purgeIntervalSeconds: env.PURGE_INTERVAL_SECONDS,
    shutdownGraceSeconds: env.SHUTDOWN_GRACE_SECONDS,
    auditRetentionDays: env.AUDIT_RETENTION_DAYS,
    demoSeed: (env.DEMO_SEED ?? true) && env.NODE_ENV === 'development',
    /** DEMO_SEED=true set explicitly: outside development it is ignored, and start-up says so. */
    isDemoSeedRequested: env.DEMO_SEED === true,
    smtpUrl: env.SMTP_URL,
    mailFrom: env.MAIL_FROM ?? `no-reply@${new URL(baseUrl).hostname}`,
    mailMaxAttempts: env.MAIL_MAX_ATTEMPTS,
    metricsToken: env.METRICS_TOKEN,
    metricsPort: env.METRICS_PORT,
    allowPrivateNetworkTargets: env.ALLOW_PRIVATE_NETWORK_TARGETS,
    outboundCaFile: env.OUTBOUND_CA_FILE,
  };
}

function parseTrustProxy(value: string): boolean | number | string {
  if (value === 'true') return true;
  if (value === 'false' || value === '') return false;
  if (/^\d+$/.test(value)) return Number(value);
  return value;
}

export class ConfigError extends Error {}

/** Pure: reads the given environment, never process.env. Throws ConfigError naming each bad variable. */
export function loadConfig(env: Record<string, string | undefined>): Config {
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = configSchema.safeParse(present);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.') || '(environment)'}: ${i.message}`);
    throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
  }
  return toConfig(parsed.data);
}

/** The variables of the schema with their defaults, for .env.example and the README table. */
export function configKeys(): string[] {
  return Object.keys(configSchema.shape);
}
