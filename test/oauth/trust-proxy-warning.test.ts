import { Writable } from 'node:stream';
import pino from 'pino';
import request from 'supertest';
import { createApp } from '../../src/app';
import { openDatabase, type Database } from '../../src/db';
import { testConfig } from '../helpers';

const opened: Database[] = [];
afterAll(async () => {
  for (const d of opened) await d.close();
});

/** An app whose pino logger writes into an array of parsed lines. */
async function appWithLog(overrides: Record<string, string> = {}) {
  const lines: Array<{ level: number; msg: string }> = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  const config = testConfig(overrides);
  const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolMax: 2 });
  opened.push(database);
  const { app } = createApp({
    config,
    db: database.db,
    sessionPool: database.sessionPool,
    logger: pino({ level: 'warn' }, stream),
  });
  return { app, warnings: () => lines.filter((l) => l.level === 40) };
}

describe('X-Forwarded-For without TRUST_PROXY', () => {
  it('logs one warning per process that every user shares the proxy address', async () => {
    const { app, warnings } = await appWithLog();
    await request(app).get('/healthz').expect(200);
    expect(warnings()).toEqual([]); // no header, no warning
    await request(app).get('/healthz').set('X-Forwarded-For', '203.0.113.7').expect(200);
    await request(app).get('/healthz').set('X-Forwarded-For', '203.0.113.8').expect(200);
    expect(warnings()).toHaveLength(1);
    expect(warnings()[0].msg).toMatch(/X-Forwarded-For/);
    expect(warnings()[0].msg).toMatch(/TRUST_PROXY/);
    expect(warnings()[0].msg).toMatch(/share/);
    expect(warnings()[0].msg).not.toContain('203.0.113'); // the forwarded addresses are not logged
  });

  it('stays quiet when TRUST_PROXY is set', async () => {
    const { app, warnings } = await appWithLog({ TRUST_PROXY: 'loopback' });
    await request(app).get('/healthz').set('X-Forwarded-For', '203.0.113.7').expect(200);
    await request(app).get('/healthz').set('X-Forwarded-For', '203.0.113.8').expect(200);
    expect(warnings()).toEqual([]);
  });
});
