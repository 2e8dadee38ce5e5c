import fs from 'node:fs';
import path from 'node:path';
import { loadConfig, configKeys, configSchema, ConfigError } from '../../src/config';
import { riskySettings } from '../../src/config-warnings';

describe('configuration', () => {
  it('applies the documented defaults', () => {
    const c = loadConfig({});
    expect(c.port).toBe(3000);
    expect(c.baseUrl).toBe('http://localhost:3000');
    expect(c.databaseUrl).toBeUndefined();
    expect(c.codeTtlSeconds).toBe(60);
    expect(c.accessTokenTtlSeconds).toBe(3600);
    expect(c.refreshTokenTtlSeconds).toBe(2592000);
    expect(c.sessionTtlSeconds).toBe(1209600);
    expect(c.refreshReuseGraceSeconds).toBe(10);
    expect(c.rateLimitScale).toBe(1);
    expect(c.passwordMinLength).toBe(8);
    expect(c.trustProxy).toBe(false);
  });

  it('derives BASE_URL from PORT and strips a trailing slash', () => {
    expect(loadConfig({ PORT: '8080' }).baseUrl).toBe('http://localhost:8080');
    expect(loadConfig({ BASE_URL: 'https://id.example.com/' }).baseUrl).toBe('https://id.example.com');
  });

  it.each([
    ['PORT', 'eighty', 'PORT'],
    ['PORT', '70000', 'PORT'],
    ['BASE_URL', 'not a url', 'BASE_URL'],
    ['DATABASE_URL', 'mysql://x', 'DATABASE_URL'],
    ['MASTER_KEY', 'short', 'MASTER_KEY'],
    ['RATE_LIMIT_SCALE', '-1', 'RATE_LIMIT_SCALE'],
    ['PASSWORD_MIN_LENGTH', '4', 'PASSWORD_MIN_LENGTH'],
    ['LOG_LEVEL', 'loud', 'LOG_LEVEL'],
    ['ACCESS_TOKEN_TTL_SECONDS', '0', 'ACCESS_TOKEN_TTL_SECONDS'],
  ])('refuses %s=%s naming the variable', (key, value, named) => {
    expect(() => loadConfig({ [key]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [key]: value })).toThrow(new RegExp(`${named}: `));
  });

  // One rule for every numeric variable: what it must be in plain words, and what it got.
  it.each([
    ['PORT', 'abc', 'must be a whole number from 1 to 65535, got "abc"'],
    ['PORT', '0', 'must be a whole number from 1 to 65535, got "0"'],
    ['PORT', '80.5', 'must be a whole number from 1 to 65535, got "80.5"'],
    ['METRICS_PORT', '99999', 'must be a whole number from 1 to 65535, got "99999"'],
    ['DB_POOL_MAX', 'ten', 'must be a whole number from 1 to 200, got "ten"'],
    ['CODE_TTL_SECONDS', '-5', 'must be a whole number of at least 1, got "-5"'],
    ['DB_STATEMENT_TIMEOUT_MS', '15s', 'must be a whole number of at least 0, got "15s"'],
    ['RATE_LIMIT_SCALE', 'half', 'must be a number of at least 0, got "half"'],
  ])('says in plain words what %s must be (%s)', (key, value, rule) => {
    expect(() => loadConfig({ [key]: value })).toThrow(`Invalid configuration:\n  ${key}: ${rule}`);
  });

  it('reads numeric variables as numbers', () => {
    const c = loadConfig({ PORT: '8080', RATE_LIMIT_SCALE: '0.5', DB_STATEMENT_TIMEOUT_MS: '0', METRICS_PORT: '9464' });
    expect([c.port, c.rateLimitScale, c.dbStatementTimeoutMs, c.metricsPort]).toEqual([8080, 0.5, 0, 9464]);
  });

  it('in production requires MASTER_KEY, SESSION_SECRET and an https BASE_URL', () => {
    let message = '';
    try {
      loadConfig({ NODE_ENV: 'production', BASE_URL: 'http://id.example.com' });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toMatch(/MASTER_KEY: is required/);
    expect(message).toMatch(/SESSION_SECRET: is required/);
    expect(message).toMatch(/BASE_URL: must be an https URL/);
    expect(message).toMatch(/SMTP_URL: is required/);
    expect(() =>
      loadConfig({
        NODE_ENV: 'production',
        BASE_URL: 'https://id.example.com',
        MASTER_KEY: 'a'.repeat(43),
        SESSION_SECRET: 's'.repeat(32),
        SMTP_URL: 'smtps://mailer:secret@smtp.example.com:465',
      }),
    ).not.toThrow();
  });

  // The server never fetches a logo URL (pages show it with <img>: the browser loads it), so no
  // text about the outbound guard may list logo URLs among the requests the provider makes.
  it('says the same as the code about which requests ALLOW_PRIVATE_NETWORK_TARGETS lets through', () => {
    const root = path.resolve(__dirname, '../..');
    const example = fs.readFileSync(path.join(root, '.env.example'), 'utf8');
    // The comment lines right above the variable, back to the previous variable.
    const above = example.slice(0, example.indexOf('# ALLOW_PRIVATE_NETWORK_TARGETS=')).trimEnd().split('\n');
    const previous = above.map((l) => /^#?\s*[A-Z0-9_]+=/.test(l)).lastIndexOf(true);
    const exampleBlock = above.slice(previous + 1).join('\n');
    const readmeRow = fs
      .readFileSync(path.join(root, 'README.md'), 'utf8')
      .split('\n')
      .find((l) => l.startsWith('| `ALLOW_PRIVATE_NETWORK_TARGETS` |'))!;
    const warning = riskySettings(
      loadConfig({
        NODE_ENV: 'production',
        BASE_URL: 'https://id.example.com',
        MASTER_KEY: 'a'.repeat(43),
        SESSION_SECRET: 's'.repeat(32),
        SMTP_URL: 'smtp://mail:25',
        ALLOW_PRIVATE_NETWORK_TARGETS: 'true',
      }),
    )[0];
    const texts = {
      example: exampleBlock,
      readme: readmeRow,
      schema: configSchema.shape.ALLOW_PRIVATE_NETWORK_TARGETS.description!,
      warning,
    };
    for (const [where, text] of Object.entries(texts)) {
      const listed = /\(([^)]*)\)/.exec(text)?.[1] ?? ''; // the requests, named in the first parentheses
      expect([where, /back-channel logout/.test(listed), /upstream/.test(listed), /\blogo\b/i.test(listed)]).toEqual([
        where,
        true,
        true,
        false,
      ]);
    }
    for (const text of [texts.example, texts.readme]) expect(text).toMatch(/Logo URLs are never fetched by the server/);
  });

  it('keeps .env.example equal to the schema', () => {
    const example = fs.readFileSync(path.resolve(__dirname, '../../.env.example'), 'utf8');
    const keys = example
      .split('\n')
      .map((l) => l.replace(/^#\s*/, ''))
      .filter((l) => /^[A-Z0-9_]+=/.test(l))
      .map((l) => l.split('=')[0]);
    expect(keys.sort()).toEqual(configKeys().sort());
  });
});
