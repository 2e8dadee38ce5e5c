import { execFile } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { defaultThreadpoolSize } from '../../src/threadpool-size';

/** libuv's pool: one thread per core, 2 to 4, unless the operator chose (decisions: "libuv's pool"). */
const run = promisify(execFile);
const MODULE = path.resolve(__dirname, '..', '..', 'src', 'threadpool-size.ts');

describe('UV_THREADPOOL_SIZE default', () => {
  it.each([
    [1, '2'],
    [2, '2'],
    [3, '3'],
    [4, '4'],
    [64, '4'],
  ])('%i cores: %s threads', (cores, expected) => {
    expect(defaultThreadpoolSize({}, cores)).toBe(expected);
  });

  it("keeps the operator's value", () => {
    expect(defaultThreadpoolSize({ UV_THREADPOOL_SIZE: '16' }, 2)).toBe('16');
  });

  // The threads a process gains when libuv's pool starts: the setting must reach libuv.
  const poolThreads = async (preload: boolean, env: NodeJS.ProcessEnv) => {
    const script = `${preload ? `require('tsx/cjs'); require(${JSON.stringify(MODULE)});` : ''}
      const c = require('node:crypto'), fs = require('node:fs'); let n = 0;
      const threads = () => fs.readdirSync('/proc/self/task').length;
      const before = threads();
      for (let i = 0; i < 8; i++) c.pbkdf2('a', 'b', 20000, 32, 'sha256', () => { if (++n === 8) console.log(threads() - before); });`;
    const { stdout } = await run(process.execPath, ['-e', script], {
      env: { PATH: process.env.PATH, ...env },
      cwd: path.resolve(__dirname, '..', '..'),
    });
    return Number(stdout.trim());
  };

  (process.platform === 'linux' ? it : it.skip)(
    'sizes the pool of the process that loads it first',
    async () => {
      expect(await poolThreads(false, {})).toBe(4); // libuv's own default, for reference
      expect(await poolThreads(true, {})).toBe(Number(defaultThreadpoolSize({}, os.availableParallelism())));
      expect(await poolThreads(true, { UV_THREADPOOL_SIZE: '6' })).toBe(6);
    },
    30_000,
  );
});
