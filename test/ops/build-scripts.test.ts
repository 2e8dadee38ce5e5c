import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

/**
 * `npm ci` builds: `prepare` runs scripts/ensure-build.js --prepare, which compiles
 * when dist/ is missing or stale. Run here on a tiny project of the same layout (src/, migrations/,
 * the two tsconfig files), with the repository's TypeScript, so each build takes seconds.
 */
const ROOT = path.resolve(__dirname, '..', '..');
const run = promisify(execFile);
const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));

function project(withTypeScript: boolean): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'latchkey-build-'));
  fs.mkdirSync(path.join(dir, 'scripts'));
  for (const f of ['build.js', 'ensure-build.js'])
    fs.copyFileSync(path.join(ROOT, 'scripts', f), path.join(dir, 'scripts', f));
  if (withTypeScript) fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'));
  fs.writeFileSync(
    path.join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'commonjs',
        lib: ['ES2022'],
        types: [],
        strict: true,
        rootDir: 'src',
        outDir: 'dist',
        skipLibCheck: true,
      },
      include: ['src/**/*.ts'],
    }),
  );
  fs.mkdirSync(path.join(dir, 'src'));
  fs.mkdirSync(path.join(dir, 'migrations'));
  fs.writeFileSync(
    path.join(dir, 'migrations', 'tsconfig.json'),
    fs.readFileSync(path.join(ROOT, 'migrations', 'tsconfig.json')),
  );
  fs.writeFileSync(path.join(dir, 'src', 'main.ts'), 'export const answer: number = 42;\n');
  fs.writeFileSync(path.join(dir, 'migrations', '20260101000000_first.ts'), 'export const up = 1;\n');
  fs.writeFileSync(path.join(dir, 'migrations', '20260102000000_second.ts'), 'export const up = 2;\n');
  return dir;
}

const ensureBuild = (dir: string, ...args: string[]) =>
  run(process.execPath, [path.join(dir, 'scripts', 'ensure-build.js'), ...args], {
    cwd: dir,
    env: { PATH: process.env.PATH ?? '', HOME: dir },
  }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (err) => ({ code: err.code as number, stdout: err.stdout as string, stderr: err.stderr as string }),
  );

const later = (file: string) => {
  const t = new Date(Date.now() + 2000);
  fs.utimesSync(file, t, t);
};

describe('npm ci builds', () => {
  it('has a prepare script that builds when needed', () => {
    expect(pkg.scripts.prepare).toBe('node scripts/ensure-build.js --prepare');
    expect(pkg.scripts.build).toBe('node scripts/build.js');
    // Node's own flags (the V8 heap ceiling) may sit between `node` and the entry point.
    expect(pkg.scripts.start).toMatch(/^node scripts\/ensure-build\.js && node (--[a-z-]+=\S+ )*dist\/main\.js$/);
  });

  it('compiles a fresh clone, then leaves an up-to-date dist/ alone', async () => {
    const dir = project(true);
    try {
      const first = await ensureBuild(dir, '--prepare');
      expect(first).toMatchObject({ code: 0, stdout: '' });
      expect(first.stderr).toMatch(/Compiling TypeScript/);
      expect(fs.existsSync(path.join(dir, 'dist', 'main.js'))).toBe(true);
      expect(
        fs
          .readdirSync(path.join(dir, 'dist', 'migrations'))
          .filter((f) => f.endsWith('.js'))
          .sort(),
      ).toEqual(['20260101000000_first.js', '20260102000000_second.js']);

      const builtAt = fs.statSync(path.join(dir, 'dist', 'main.js')).mtimeMs;
      const second = await ensureBuild(dir);
      expect(second).toEqual({ code: 0, stdout: '', stderr: '' });
      expect(fs.statSync(path.join(dir, 'dist', 'main.js')).mtimeMs).toBe(builtAt);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);

  it('rebuilds an edited source into a clean dist/: a removed migration leaves no stale JavaScript', async () => {
    const dir = project(true);
    try {
      expect((await ensureBuild(dir, '--prepare')).code).toBe(0);
      fs.rmSync(path.join(dir, 'migrations', '20260102000000_second.ts'));
      fs.writeFileSync(path.join(dir, 'src', 'main.ts'), 'export const answer: number = 43;\n');
      later(path.join(dir, 'src', 'main.ts'));
      const res = await ensureBuild(dir);
      expect(res.code).toBe(0);
      expect(fs.readFileSync(path.join(dir, 'dist', 'main.js'), 'utf8')).toMatch(/43/);
      expect(fs.readdirSync(path.join(dir, 'dist', 'migrations')).filter((f) => f.endsWith('.js'))).toEqual([
        '20260101000000_first.js',
      ]);
      expect(fs.readdirSync(dir).filter((f) => f.startsWith('dist.'))).toEqual([]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);

  it('keeps the last good dist/ when the build fails, and exits non-zero', async () => {
    const dir = project(true);
    try {
      expect((await ensureBuild(dir, '--prepare')).code).toBe(0);
      fs.writeFileSync(path.join(dir, 'src', 'main.ts'), 'export const answer: number = "not a number";\n');
      later(path.join(dir, 'src', 'main.ts'));
      const res = await ensureBuild(dir);
      expect(res.code).toBe(1);
      expect(res.stderr).toMatch(/error: the TypeScript build failed/);
      expect(fs.readFileSync(path.join(dir, 'dist', 'main.js'), 'utf8')).toMatch(/42/);
      expect(fs.readdirSync(dir).filter((f) => f.startsWith('dist.'))).toEqual([]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);

  it('without TypeScript (npm ci --omit=dev): prepare passes with a note, start refuses with a clear line', async () => {
    const dir = project(false);
    try {
      const prepare = await ensureBuild(dir, '--prepare');
      expect(prepare).toEqual({
        code: 0,
        stdout: '',
        stderr: 'prepare: TypeScript is not installed (production dependencies only); dist/ was not built\n',
      });
      const start = await ensureBuild(dir);
      expect(start.code).toBe(1);
      expect(start.stderr).toBe(
        'error: dist/ is missing or older than src/ and TypeScript is not installed: run `npm ci` (with dev dependencies) to build it\n',
      );
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('in the image layout (dist/ without src/), uses dist/ as it is', async () => {
    const dir = project(false);
    try {
      fs.rmSync(path.join(dir, 'src'), { recursive: true });
      fs.rmSync(path.join(dir, 'migrations'), { recursive: true });
      fs.mkdirSync(path.join(dir, 'dist'));
      fs.writeFileSync(path.join(dir, 'dist', 'main.js'), '');
      expect(await ensureBuild(dir)).toEqual({ code: 0, stdout: '', stderr: '' });
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
