import type { Deps } from '../deps';
import type { Audit } from '../audit.service';
import type { Platforms } from '../platforms.service';
import { createAdminTokens } from './admin-tokens.service';
import { createPlatformsAdmin } from './platforms.admin';
import { createKeysAdmin } from './keys.admin';
import { createThrottlesAdmin } from './throttles.admin';
import { createMailAdmin } from './mail.admin';
import { createAuditAdmin } from './audit.admin';
import type { SigningKeys } from '../signing-keys.service';
import type { MailOutbox } from '../mail-outbox.service';
import { createUsersAdmin, type UsersAdminBase } from './users.admin';
import { createClientsAdmin } from './clients.admin';
import type { ClientAuth } from '../client-auth.service';

/** What the admin services build on: the base services they reuse. */
export interface AdminBase extends UsersAdminBase {
  audit: Audit;
  platforms: Platforms;
  clientAuth: ClientAuth;
  signingKeys: SigningKeys;
  mailOutbox: MailOutbox;
}

/**
 * The operator's side (DESIGN §14): one object the admin API, the CLI and the console all call.
 * Every function takes the AdminActor first, checks its platform scope, and audits each change in
 * the change's own transaction.
 */
export function createAdminServices(deps: Deps, base: AdminBase) {
  const platforms = createPlatformsAdmin(deps, base.platforms, base.audit, base.signingKeys);
  return {
    tokens: createAdminTokens(deps, base.platforms, base.audit),
    platforms,
    users: createUsersAdmin(deps, base),
    clients: createClientsAdmin(deps, base.platforms, base.clientAuth, platforms, base.audit),
    keys: createKeysAdmin(deps, platforms, base.signingKeys, base.audit),
    throttles: createThrottlesAdmin(deps, platforms, base.throttle, base.audit),
    mail: createMailAdmin(deps, platforms, base.mailOutbox, base.audit),
    audit: createAuditAdmin(platforms, base.audit),
  };
}

export type AdminServices = ReturnType<typeof createAdminServices>;
