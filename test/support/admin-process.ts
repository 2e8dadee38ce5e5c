import path from 'node:path';
import { execFile } from 'node:child_process';

const ROOT = path.resolve(__dirname, '..', '..');

export interface AdminResult {
  code: number;
  /** The JSON object printed on stdout, if any. */
  out: any;
  err: string;
}

/**
 * `admin …` as an operator runs it: a process of its own (`node --import tsx src/cli/main.ts`,
 * the entry `npm run admin` runs compiled) with exactly `env` and nothing else of the test's.
 */
export function adminProcess(env: Record<string, string>, argv: string[]): Promise<AdminResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', 'src/cli/main.ts', ...argv],
      {
        cwd: ROOT,
        env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
      },
      (error, stdout, stderr) => {
        resolve({
          code: error ? Number(error.code ?? 1) : 0,
          out: stdout.trim() ? JSON.parse(stdout) : undefined,
          err: stderr,
        });
      },
    );
  });
}
