import type { CliCommand } from '../command-table';
import { platformCommands } from './platform.commands';
import { clientCommands } from './client.commands';
import { userCommands } from './user.commands';
import { keyCommands } from './key.commands';
import { operationsCommands } from './operations.commands';
import { tokenCommands } from './token.commands';
import { operatorCommands } from './operator.commands';
import { auditCommands } from './audit.commands';
import { upstreamCommands } from './upstream.commands';
import { resourceCommands } from './resource.commands';
import { registrationTokenCommands } from './registration-token.commands';

/** Backup and restore work on the database itself (src/cli/database-commands.ts); listed here for --help. */
const DATABASE_COMMANDS: CliCommand[] = [
  {
    group: 'backup',
    verb: '',
    usage: '--out FILE',
    flags: ['out'],
    summary: 'One consistent snapshot, also while the provider runs; keep MASTER_KEY with it, apart.',
    run: () => Promise.reject(new Error('backup runs before the services start')),
  },
  {
    group: 'restore',
    verb: '',
    usage: '--in FILE',
    flags: ['in'],
    summary: 'Into an empty database: a fresh DATA_DIR with the provider stopped, or an empty Postgres.',
    run: () => Promise.reject(new Error('restore runs before the services start')),
  },
];

/** Every CLI verb, in the order --help lists them. */
export const COMMANDS: CliCommand[] = [
  ...platformCommands,
  ...clientCommands,
  ...userCommands,
  ...upstreamCommands,
  ...resourceCommands,
  ...keyCommands,
  ...registrationTokenCommands,
  ...operationsCommands,
  ...auditCommands,
  ...tokenCommands,
  ...operatorCommands,
  ...DATABASE_COMMANDS,
];
