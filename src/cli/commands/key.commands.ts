import type { CliCommand } from '../command-table';
import { one } from '../flags';

export const keyCommands: CliCommand[] = [
  {
    group: 'key', verb: 'rotate', usage: '--platform G', flags: ['platform'],
    summary: 'Make a new active signing key; the old one stays published for its tokens.',
    run: async (s, flags) => ({ kid: await s.platforms.rotateKey(one(flags, 'platform', true)) }),
  },
];
