import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { COMMANDS } from '../../src/cli/commands/index';
import { helpRequest, helpText } from '../../src/cli/commands';

const exec = promisify(execFile);
/** No database at all: help must answer without one (DATABASE_URL points at a closed port, DATA_DIR nowhere). */
const cli = (args: string[]) =>
  exec(process.execPath, [require.resolve('tsx/cli'), path.resolve(__dirname, '../../src/cli/main.ts'), ...args], {
    env: {
      ...process.env,
      NODE_ENV: 'test',
      DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none',
      DATA_DIR: '/nonexistent/latchkey',
    },
  });

describe('admin CLI --help', () => {
  const groups = [...new Set(COMMANDS.map((c) => c.group))];

  // Each call is a process compiling src/ with tsx (seconds on a loaded 2-core machine): the four
  // run side by side, under a deadline that guards a hang, not a speed.
  it('answers at the top level with every group, exit 0, without a database', async () => {
    const answers = await Promise.all([['--help'], ['-h'], ['help'], []].map(cli));
    for (const { stdout, stderr } of answers) {
      expect(stderr).toBe('');
      for (const g of groups) expect(stdout).toMatch(new RegExp(`^  ${g} `, 'm'));
    }
  }, 120_000);

  it('answers for a group and for a verb as a process, exit 0', async () => {
    expect((await cli(['user', '--help'])).stdout).toContain('admin user create');
    expect((await cli(['platform', 'update', '--help'])).stdout).toMatch(/^Usage: admin platform update --platform G/);
  }, 120_000);

  it('has help for every group and every verb (the words the process reads)', () => {
    for (const g of groups) {
      const text = helpText(helpRequest([g, '--help'])!.words);
      for (const c of COMMANDS.filter((x) => x.group === g))
        expect(text).toContain(`admin ${g}${c.verb ? ` ${c.verb}` : ''}`);
    }
    for (const c of COMMANDS.filter((x) => x.verb)) {
      const text = helpText(helpRequest([c.group, c.verb, '--help'])!.words);
      expect(text.startsWith(`Usage: admin ${c.group} ${c.verb}`)).toBe(true);
      expect(text).toContain(c.summary);
    }
  });

  it("lists every verb of a group in the group's summary, at the top level and in the group's help", () => {
    const top = helpText([]);
    for (const g of groups) {
      const verbs = COMMANDS.filter((c) => c.group === g && c.verb).map((c) => c.verb);
      const line = top.split('\n').find((l) => l.startsWith(`  ${g} `))!;
      const heading = helpText([g]).split('\n')[0];
      for (const v of verbs) {
        expect([g, line]).toEqual([g, expect.stringMatching(new RegExp(`[:,] ${v}(,|$)`))]);
        expect([g, heading]).toEqual([g, expect.stringMatching(new RegExp(`[:,] ${v}(,|$)`))]);
      }
    }
  });

  it('names an unknown command on stderr and exits 1', async () => {
    const err = await cli(['frobnicate', '--help']).catch((e) => e);
    expect(err.code).toBe(1);
    expect(err.stderr).toBe('error: unknown command "frobnicate"; admin --help lists them\n');
  });
});
