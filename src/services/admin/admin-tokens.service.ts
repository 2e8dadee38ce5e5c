import { digest } from '../../crypto/digest';
import { newId, randomToken } from '../../crypto/random';
import { invalidRequest, OAuthError } from '../../errors';
import { isUuid } from '../../domain/ids';
import type { AdminActor } from '../../domain/admin';
import * as adminTokens from '../../repositories/admin-token.repository';
import type { Deps } from '../deps';
import type { Audit } from '../audit.service';
import type { Platforms } from '../platforms.service';
import { assertGlobal } from './access';

const ADMIN_TOKEN_PREFIX = 'lk_admin_';
const TOKEN_SHAPE = /^lk_admin_[A-Za-z0-9_-]{43}$/;

/** Admin API tokens: `lk_admin_` + 256 random bits, shown once, stored as a digest. */
export function createAdminTokens(deps: Deps, platforms: Platforms, audit: Audit) {
  return {
    async create(actor: AdminActor, input: { name: string; platformId: string | null }) {
      assertGlobal(actor, 'creating an admin token');
      const name = input.name.trim();
      if (!name || name.length > 200) throw invalidRequest('name must be 1 to 200 characters');
      if (input.platformId !== null) await platforms.requirePlatform(input.platformId);
      const token = `${ADMIN_TOKEN_PREFIX}${randomToken(32)}`;
      const row = await deps.db.transaction(async (trx) => {
        const created = await adminTokens.insert(trx, {
          id: newId(),
          name,
          platformId: input.platformId,
          tokenDigest: digest(token),
        });
        await audit.record(trx, actor, {
          kind: 'admin_token.created',
          platformId: input.platformId,
          details: { token_id: created.id, name },
        });
        return created;
      });
      return { ...row, token };
    },

    async revoke(actor: AdminActor, id: string) {
      assertGlobal(actor, 'revoking an admin token');
      const row = isUuid(id) ? await adminTokens.findById(deps.db, id) : undefined;
      if (!row) throw new OAuthError('not_found', `unknown admin token "${id}"`);
      await deps.db.transaction(async (trx) => {
        if (await adminTokens.revoke(trx, id, deps.now())) {
          await audit.record(trx, actor, {
            kind: 'admin_token.revoked',
            platformId: row.platformId,
            details: { token_id: id, name: row.name },
          });
        }
      });
      return (await adminTokens.findById(deps.db, id))!;
    },

    list: (actor: AdminActor) => adminTokens.list(deps.db, actor.platformId ?? undefined),

    /** The token's identity as an actor, or undefined for anything that is not a live token. */
    async authenticate(raw: string): Promise<Omit<AdminActor, 'source' | 'userAgent' | 'requestId'> | undefined> {
      if (!TOKEN_SHAPE.test(raw)) return undefined;
      const row = await adminTokens.findLiveByDigest(deps.db, digest(raw));
      if (!row) return undefined;
      await adminTokens.touch(deps.db, row.id, deps.now());
      return { actorType: 'admin_token', actorId: row.id, actorName: row.name, platformId: row.platformId };
    },
  };
}

export type AdminTokens = ReturnType<typeof createAdminTokens>;
