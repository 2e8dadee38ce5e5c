import type { Deps } from './deps';
import { createPlatforms } from './platforms.service';
import { createSigningKeys } from './signing-keys.service';
import { createUsers } from './users.service';
import { createMaintenance } from './maintenance.service';

/** The service layer as one plain object; the app, the CLI and the tests build the same one. */
export function createServices(deps: Deps) {
  const signingKeys = createSigningKeys(deps);
  const platforms = createPlatforms(deps, signingKeys);
  const users = createUsers(deps);
  const maintenance = createMaintenance(deps);
  return { deps, signingKeys, platforms, users, maintenance };
}

export type Services = ReturnType<typeof createServices>;
export type { Deps };
