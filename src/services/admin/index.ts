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
import type { UpstreamProviders } from '../federation/providers.service';
import { createUpstreamProvidersAdmin } from './upstream-providers.admin';
import { createUserIdentitiesAdmin } from './user-identities.admin';
import type { Resources } from '../resources.service';
import { createResourcesAdmin } from './resources.admin';
import { createRegistrationTokensAdmin } from './registration-tokens.admin';
import { createShownOnce } from './shown-once';

/** What the admin services build on: the base services they reuse. */
export interface AdminBase extends UsersAdminBase {
  audit: Audit;
  platforms: Platforms;
  clientAuth: ClientAuth;
  signingKeys: SigningKeys;
  mailOutbox: MailOutbox;
  upstreamProviders: UpstreamProviders;
  resources: Resources;
}

/**
 * The operator's side: one object the admin API, the CLI and the console all call.
 * Every function takes the AdminActor first, checks its platform scope, and audits each change in
 * the change's own transaction.
 */
export function createAdminServices(deps: Deps, base: AdminBase) {
  const platforms = createPlatformsAdmin(deps, base.platforms, base.audit, base.signingKeys);
  const users = createUsersAdmin(deps, base);
  return {
    tokens: createAdminTokens(deps, base.platforms, base.audit),
    platforms,
    users,
    clients: createClientsAdmin(deps, base.platforms, base.clientAuth, platforms, base.audit),
    keys: createKeysAdmin(deps, platforms, base.signingKeys, base.audit),
    throttles: createThrottlesAdmin(deps, platforms, base.throttle, base.audit),
    mail: createMailAdmin(deps, platforms, base.mailOutbox, base.audit),
    audit: createAuditAdmin(platforms, base.audit),
    upstreamProviders: createUpstreamProvidersAdmin(deps, base.upstreamProviders, platforms, base.audit),
    resources: createResourcesAdmin(deps, base.resources, platforms, base.audit),
    identities: createUserIdentitiesAdmin(deps, users, base.upstreamProviders, base.audit),
    registrationTokens: createRegistrationTokensAdmin(deps, platforms, base.audit),
    shownOnce: createShownOnce(deps),
  };
}

export type AdminServices = ReturnType<typeof createAdminServices>;
