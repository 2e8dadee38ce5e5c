import type { Services } from '../services';
import type { AdminActor } from '../domain/admin';
import type { Flags } from './flags';

/**
 * One CLI verb: `admin GROUP VERB --flags`. `usage` lists the flags (shown by `--help` and on a
 * usage error); `run` parses them — into the admin API's own input shapes, validated by the same
 * schemas — calls the admin services and returns the JSON object to print.
 */
export interface CliCommand {
  group: string;
  verb: string;
  summary: string;
  /** Flag synopsis after `admin GROUP VERB`, e.g. `--platform G --name NAME`. */
  usage: string;
  /** Longer help: one line per flag or rule. */
  details?: string[];
  /** Options this verb accepts (anything else is an error). */
  flags: readonly string[];
  run(s: Services, flags: Flags, actor: AdminActor): Promise<Record<string, unknown>>;
}

/** Group summaries for `admin --help`. */
export const GROUPS: Record<string, string> = {
  platform: 'platforms: create, list, show, update, rate limits, second-factor policy',
  client: 'a platform\'s clients: create, list, show, update, rotate-secret, delete',
  user: 'a platform\'s users: create, search, show, update, disable, enable, unlock, sign-out, sessions, consents, delete, reset-mfa, password-reset',
  upstream: 'a platform\'s upstream identity providers: add, list, show, update, remove; a user\'s linked identities, unlink',
  key: 'signing keys: list, rotate, retire',
  throttle: 'sign-in and sign-up throttles: list, clear',
  mail: 'the mail outbox: list, retry',
  audit: 'the audit log: list',
  token: 'admin API tokens: create, list, revoke',
  operator: 'admin console operators: create, list, disable',
  'master-key': 'MASTER_KEY rotation: reseal',
  backup: 'one consistent snapshot of the database',
  restore: 'a backup into an empty database',
};

export function commandLine(c: Pick<CliCommand, 'group' | 'verb' | 'usage'>): string {
  return `admin ${c.group}${c.verb ? ` ${c.verb}` : ''}${c.usage ? ` ${c.usage}` : ''}`;
}

/** The help text for `admin [GROUP [VERB]] --help`; undefined when the words name nothing. */
export function helpFor(commands: readonly CliCommand[], words: string[]): string | undefined {
  const [group, verb] = words;
  if (!group) {
    const groups = [...new Set(commands.map((c) => c.group))];
    const width = Math.max(...groups.map((g) => g.length));
    return [
      'Usage: admin GROUP VERB [--flags]   (prints one JSON object; errors on stderr, exit 1)',
      '',
      'Groups:',
      ...groups.map((g) => `  ${g.padEnd(width)}  ${GROUPS[g] ?? ''}`),
      '',
      'admin GROUP --help lists its verbs; admin GROUP VERB --help describes one.',
    ].join('\n');
  }
  const inGroup = commands.filter((c) => c.group === group);
  if (inGroup.length === 0) return undefined;
  if (!verb || (inGroup.length === 1 && inGroup[0].verb === '')) {
    if (inGroup.length === 1 && inGroup[0].verb === '') return describe(inGroup[0]);
    return [`admin ${group}: ${GROUPS[group] ?? ''}`, '', ...inGroup.map((c) => `  ${commandLine(c)}\n      ${c.summary}`)].join('\n');
  }
  const command = inGroup.find((c) => c.verb === verb);
  return command && describe(command);
}

function describe(c: CliCommand): string {
  return [`Usage: ${commandLine(c)}`, '', c.summary, ...(c.details?.length ? ['', ...c.details.map((d) => `  ${d}`)] : [])].join('\n');
}
