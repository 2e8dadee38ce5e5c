import type { Deps } from '../deps';
import type { Audit } from '../audit.service';
import type { Platforms } from '../platforms.service';
import { createAdminTokens } from './admin-tokens.service';
import { createPlatformsAdmin } from './platforms.admin';
import { createClientsAdmin } from './clients.admin';
import type { ClientAuth } from '../client-auth.service';
import { createUsersAdmin, type UsersAdminBase } from './users.admin';

/** What the admin services build on: the base services they reuse. */
export interface AdminBase extends UsersAdminBase {
  audit: Audit;
  platforms: Platforms;
  clientAuth: ClientAuth;
}

/**
 * The operator's side (DESIGN §14): one object the admin API, the CLI and the console all call.
 * Every function takes the AdminActor first, checks its platform scope, and audits each change in
 * the change's own transaction.
 */
export function createAdminServices(deps: Deps, base: AdminBase) {
  const platforms = createPlatformsAdmin(deps, base.platforms, base.audit);
  return {
    tokens: createAdminTokens(deps, base.platforms, base.audit),
    platforms,
    clients: createClientsAdmin(deps, base.platforms, base.clientAuth, platforms, base.audit),
    users: createUsersAdmin(deps, base),
  };
}

export type AdminServices = ReturnType<typeof createAdminServices>;
