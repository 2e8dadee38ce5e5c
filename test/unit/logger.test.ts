import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { wantsPrettyLogs } from '../../src/logger';

const ROOT = path.resolve(__dirname, '..', '..');
const logOnce = (pretty: boolean) =>
  execFileSync(
    process.execPath,
    [
      '--import',
      'tsx',
      '-e',
      `require('./src/logger').createLogger('info', { pretty: ${pretty} }).info({ client_secret: 's3cret', n: 1 }, 'hello there')`,
    ],
    { cwd: ROOT, encoding: 'utf8' },
  );

describe('log format', () => {
  it('is pretty only on a terminal outside production, unless asked', () => {
    expect(wantsPrettyLogs('auto', false, true)).toBe(true);
    expect(wantsPrettyLogs('auto', false, false)).toBe(false);
    expect(wantsPrettyLogs('auto', true, true)).toBe(false);
    expect(wantsPrettyLogs('pretty', true, false)).toBe(true);
    expect(wantsPrettyLogs('json', false, true)).toBe(false);
  });

  it('writes human-readable lines when pretty and JSON otherwise, redacting secrets either way', () => {
    const pretty = logOnce(true);
    expect(pretty).toMatch(/INFO.*hello there/);
    expect(pretty).not.toMatch(/^\{"level"/m);
    const json = JSON.parse(logOnce(false));
    expect(json).toMatchObject({ level: 30, msg: 'hello there', n: 1 });
    for (const out of [pretty, JSON.stringify(json)]) expect(out).not.toContain('s3cret');
  });
});
