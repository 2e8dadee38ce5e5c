import os from 'node:os';
import { invalidRequest } from '../errors';
import { cliActor, type AdminActor } from '../domain/admin';
import type { Services } from '../services';
import { parseFlags } from './args';
import { commandLine, helpFor } from './command-table';
import { checkKnown } from './flags';
import { COMMANDS } from './commands/index';

/** The whole command list, one line each (printed on a usage error). */
const USAGE = ['Usage:', ...COMMANDS.map((c) => `  ${commandLine(c)}`)].join('\n');

/** `--help`, `-h` or `help` anywhere (or nothing at all): the help of the level the words name. */
export function helpRequest(argv: string[]): { words: string[] } | undefined {
  const { positionals, flags } = parseFlags(argv);
  const asked = argv.length === 0 || flags.has('help') || argv.includes('-h') || positionals[0] === 'help';
  if (!asked) return undefined;
  return { words: positionals.filter((w, i) => !(i === 0 && w === 'help') && w !== '-h') };
}

/** The help text for the words, or a usage error naming what is unknown. */
export function helpText(words: string[]): string {
  const text = helpFor(COMMANDS, words);
  if (text === undefined) throw invalidRequest(`unknown command "${words.join(' ')}"; admin --help lists them`);
  return text;
}

/** Runs one admin command over the service layer; returns the JSON object to print. */
export async function runCommand(
  s: Services,
  argv: string[],
  actor: AdminActor = cliActor(osUser()),
): Promise<Record<string, unknown>> {
  const { positionals, flags } = parseFlags(argv);
  const [group, verb = ''] = positionals;
  const command = COMMANDS.find((c) => c.group === group && c.verb === verb);
  if (!command || positionals.length > 2) {
    throw invalidRequest(
      positionals.length ? `unknown command "${positionals.join(' ')}"; admin --help lists them\n${USAGE}` : USAGE,
    );
  }
  checkKnown(flags, command.flags);
  return command.run(s, flags, actor);
}

function osUser(): string | undefined {
  try {
    return os.userInfo().username;
  } catch {
    return undefined; // no passwd entry (a container's arbitrary uid)
  }
}
