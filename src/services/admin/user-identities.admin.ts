import type { AdminActor } from '../../domain/admin';
import type { UpstreamProvider, UserIdentity } from '../../domain/upstream';
import { OAuthError } from '../../errors';
import * as identities from '../../repositories/user-identity.repository';
import type { Deps } from '../deps';
import type { Audit } from '../audit.service';
import type { UpstreamProviders } from '../federation/providers.service';
import type { UsersAdmin } from './users.admin';

/** A linked identity with the provider it came through. */
export interface IdentityWithProvider {
  identity: UserIdentity;
  provider: Pick<UpstreamProvider, 'id' | 'slug' | 'displayName' | 'kind'>;
}

const unknownIdentity = (id: string) => new OAuthError('not_found', `no linked identity "${id}" of this user`);

/**
 * A user's linked upstream identities as operators see them (admin API, CLI, console). An operator
 * may unlink any of them, the last way in included (unlike the account page): the user then signs
 * in with a password reset mail, and the operator is the one accountable in the audit log.
 */
export function createUserIdentitiesAdmin(
  deps: Deps,
  usersAdmin: Pick<UsersAdmin, 'get'>,
  providers: UpstreamProviders,
  audit: Audit,
) {
  async function withProviders(platformId: string, rows: UserIdentity[]): Promise<IdentityWithProvider[]> {
    const byId = new Map((await providers.list(platformId)).map((p) => [p.id, p]));
    return rows.map((identity) => {
      const p = byId.get(identity.providerId)!; // a provider's identities go with it (foreign key)
      return { identity, provider: { id: p.id, slug: p.slug, displayName: p.displayName, kind: p.kind } };
    });
  }

  return {
    /** Oldest link first. */
    async list(actor: AdminActor, platformId: string, sub: string): Promise<IdentityWithProvider[]> {
      await usersAdmin.get(actor, platformId, sub);
      // The sealed upstream tokens stay below: only the identity's public fields go up.
      const rows = (await identities.listByUser(deps.db, platformId, sub)).map(({ sealedTokens: _t, ...i }) => i);
      return withProviders(platformId, rows);
    },

    /** Removes the link; 'identity.unlinked' with the operator as actor. */
    async unlink(
      actor: AdminActor,
      platformId: string,
      sub: string,
      identityId: string,
    ): Promise<IdentityWithProvider> {
      await usersAdmin.get(actor, platformId, sub);
      return deps.db.transaction(async (trx) => {
        const identity = (await identities.listByUser(trx, platformId, sub)).find((i) => i.id === identityId);
        if (!identity || !(await identities.remove(trx, platformId, sub, identity.id)))
          throw unknownIdentity(identityId);
        const provider = await providers.get(platformId, identity.providerId, trx);
        await audit.record(trx, actor, {
          kind: 'identity.unlinked',
          platformId,
          subject: sub,
          details: { provider: provider.slug, email: identity.email, identity_id: identity.id },
        });
        const { sealedTokens: _t, ...shown } = identity;
        return {
          identity: shown,
          provider: { id: provider.id, slug: provider.slug, displayName: provider.displayName, kind: provider.kind },
        };
      });
    },
  };
}

export type UserIdentitiesAdmin = ReturnType<typeof createUserIdentitiesAdmin>;
