import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Config } from './config';

/** The secrets generated outside production and kept in DATA_DIR/secrets.json. */
export interface DevSecrets {
  masterKey?: string;
  sessionSecret?: string;
}

/**
 * Outside production, a missing MASTER_KEY or SESSION_SECRET is generated once and kept in
 * DATA_DIR/secrets.json (mode 0600), so `npm start` needs no setup and restarts keep sessions.
 * `carried` (the generated secrets a development backup brings, docs/decisions.md) take the
 * place of new random ones when DATA_DIR has none yet; secrets already there are never replaced.
 */
export function withDevSecrets(config: Config, carried: DevSecrets = {}): Config {
  if (config.isProduction || (config.masterKey && config.sessionSecret)) return config;
  const file = path.resolve(config.dataDir, 'secrets.json');
  let stored: DevSecrets = {};
  if (fs.existsSync(file)) stored = JSON.parse(fs.readFileSync(file, 'utf8'));
  const next = {
    masterKey: stored.masterKey ?? carried.masterKey ?? randomBytes(32).toString('base64url'),
    sessionSecret: stored.sessionSecret ?? carried.sessionSecret ?? randomBytes(32).toString('base64url'),
  };
  if (next.masterKey !== stored.masterKey || next.sessionSecret !== stored.sessionSecret) {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, JSON.stringify(next, null, 2), { mode: 0o600 });
  }
  return {
    ...config,
    masterKey: config.masterKey ?? next.masterKey,
    sessionSecret: config.sessionSecret ?? next.sessionSecret,
  };
}

/**
 * Which of `resolved`'s secrets withDevSecrets generated, i.e. the environment (`fromEnvironment`)
 * did not set them: what a development backup carries. Never an operator's own key, and nothing
 * in production.
 */
export function generatedSecrets(fromEnvironment: Config, resolved: Config): DevSecrets {
  if (fromEnvironment.isProduction) return {};
  return {
    ...(fromEnvironment.masterKey ? {} : { masterKey: resolved.masterKey }),
    ...(fromEnvironment.sessionSecret ? {} : { sessionSecret: resolved.sessionSecret }),
  };
}
