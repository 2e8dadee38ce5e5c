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

/**
 * What each group is about, for `admin --help`; the summary adds the group's verbs, read from
 * its commands (groupSummary), so a new verb is listed without anyone remembering to.
 */
const GROUPS: Record<string, string> = {
  platform: 'platforms, their rate limits and second-factor policy',
  client: "a platform's clients",
  user: "a platform's users",
  upstream: "a platform's upstream identity providers and a user's linked identities",
  resource: "a standard platform's resources (RFC 8707: APIs, MCP servers) and their scopes",
  key: 'signing keys',
  throttle: 'sign-in and sign-up throttles',
  mail: 'the mail outbox',
  audit: 'the audit log',
  token: 'admin API tokens',
  operator: 'admin console operators',
  'master-key': 'MASTER_KEY rotation',
  backup: 'one consistent snapshot of the database',
  restore: 'a backup into an empty database',
};

/** A group's line in the help: what it is about, then every verb it has, in the commands' order. */
function groupSummary(commands: readonly CliCommand[], group: string): string {
  const verbs = commands.filter((c) => c.group === group && c.verb).map((c) => c.verb);
  const about = GROUPS[group] ?? '';
  return verbs.length ? `${about}: ${verbs.join(', ')}` : about;
}

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
      ...groups.map((g) => `  ${g.padEnd(width)}  ${groupSummary(commands, g)}`),
      '',
      'admin GROUP --help lists its verbs; admin GROUP VERB --help describes one.',
    ].join('\n');
  }
  const inGroup = commands.filter((c) => c.group === group);
  if (inGroup.length === 0) return undefined;
  if (!verb || (inGroup.length === 1 && inGroup[0].verb === '')) {
    if (inGroup.length === 1 && inGroup[0].verb === '') return describe(inGroup[0]);
    return [
      `admin ${group}: ${groupSummary(commands, group)}`,
      '',
      ...inGroup.map((c) => `  ${commandLine(c)}\n      ${c.summary}`),
    ].join('\n');
  }
  const command = inGroup.find((c) => c.verb === verb);
  return command && describe(command);
}

function describe(c: CliCommand): string {
  return [
    `Usage: ${commandLine(c)}`,
    '',
    c.summary,
    ...(c.details?.length ? ['', ...c.details.map((d) => `  ${d}`)] : []),
  ].join('\n');
}
