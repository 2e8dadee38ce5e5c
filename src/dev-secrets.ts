import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Config } from './config';

/**
 * Outside production, a missing MASTER_KEY or SESSION_SECRET is generated once and kept in
 * DATA_DIR/secrets.json (mode 0600), so `npm start` needs no setup and restarts keep sessions.
 */
export function withDevSecrets(config: Config): Config {
  if (config.isProduction || (config.masterKey && config.sessionSecret)) return config;
  const file = path.resolve(config.dataDir, 'secrets.json');
  let stored: { masterKey?: string; sessionSecret?: string } = {};
  if (fs.existsSync(file)) stored = JSON.parse(fs.readFileSync(file, 'utf8'));
  const next = {
    masterKey: stored.masterKey ?? randomBytes(32).toString('base64url'),
    sessionSecret: stored.sessionSecret ?? randomBytes(32).toString('base64url'),
  };
  if (next.masterKey !== stored.masterKey || next.sessionSecret !== stored.sessionSecret) {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, JSON.stringify(next, null, 2), { mode: 0o600 });
  }
  return { ...config, masterKey: config.masterKey ?? next.masterKey, sessionSecret: config.sessionSecret ?? next.sessionSecret };
}
