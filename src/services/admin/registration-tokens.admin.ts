import type { AdminActor } from '../../domain/admin';
import { isUuid } from '../../domain/ids';
import {
  formatRegistrationToken,
  registrationTokenStatus,
  type RegistrationToken,
  type RegistrationTokenWithStatus,
} from '../../domain/registration-token';
import { digest } from '../../crypto/digest';
import { newId, randomToken } from '../../crypto/random';
import { OAuthError } from '../../errors';
import * as tokens from '../../repositories/registration-token.repository';
import type { Deps } from '../deps';
import type { Audit } from '../audit.service';
import { conflict } from './access';
import { decodeCursor, toPage } from './cursor';
import type { PlatformsAdmin } from './platforms.admin';

const unknownToken = (id: string) => new OAuthError('not_found', `unknown registration token "${id}"`);

/** Who made a token, as the audit log names the actor. */
const actorLabel = (actor: AdminActor) =>
  actor.actorName ?? (actor.actorId ? `${actor.actorType}:${actor.actorId}` : actor.actorType);

/**
 * Initial access tokens (RFC 7591 §3) as operators manage them (API, CLI): made for a standard
 * platform, shown once, stored as a SHA-256 digest; each change audited in its transaction.
 */
export function createRegistrationTokensAdmin(deps: Deps, platformsAdmin: PlatformsAdmin, audit: Audit) {
  const withStatus = (t: RegistrationToken): RegistrationTokenWithStatus => ({
    ...t,
    status: registrationTokenStatus(t, deps.now()),
  });
  return {
    /** A new token, returned in clear this once. Throws not_found, conflict (a seed platform). */
    async create(actor: AdminActor, platformId: string, input: { max_uses?: number; expires_in?: number }) {
      const platform = await platformsAdmin.get(actor, platformId);
      if (platform.signingProfile !== 'standard') {
        throw conflict(
          `registration tokens belong to standard platforms: this platform uses "${platform.signingProfile}" (a seed platform keeps the spec's interface, without registration)`,
        );
      }
      const id = newId();
      const token = formatRegistrationToken(id, randomToken(32));
      const now = deps.now();
      const created = await deps.db.transaction(async (trx) => {
        const row = await tokens.insert(trx, {
          id,
          platformId,
          tokenHash: digest(token),
          maxUses: input.max_uses ?? null,
          expiresAt: input.expires_in === undefined ? null : new Date(now.getTime() + input.expires_in * 1000),
          createdAt: now,
          createdBy: actorLabel(actor),
        });
        await audit.record(trx, actor, {
          kind: 'registration_token.created',
          platformId,
          details: { id, max_uses: row.maxUses, expires_at: row.expiresAt?.toISOString() ?? null },
        });
        return row;
      });
      return { registrationToken: withStatus(created), token };
    },

    async list(actor: AdminActor, platformId: string, page: { limit: number; cursor?: string }) {
      await platformsAdmin.get(actor, platformId);
      const rows = await tokens.listPage(deps.db, platformId, {
        after: decodeCursor(page.cursor),
        limit: page.limit + 1,
      });
      const { items, nextCursor } = toPage(rows, page.limit, (t) => ({ at: t.createdAt, id: t.id }));
      return { items: items.map(withStatus), nextCursor };
    },

    /** Stops it at once; revoking a revoked token changes nothing (no new event). Throws not_found. */
    async revoke(actor: AdminActor, platformId: string, id: string) {
      await platformsAdmin.get(actor, platformId);
      const before = isUuid(id) ? await tokens.findById(deps.db, platformId, id) : undefined;
      if (!before) throw unknownToken(id);
      if (before.revokedAt) return withStatus(before);
      return deps.db.transaction(async (trx) => {
        const revoked = (await tokens.revoke(trx, platformId, id, deps.now()))!;
        await audit.record(trx, actor, {
          kind: 'registration_token.revoked',
          platformId,
          details: { id, uses: revoked.uses },
        });
        return withStatus(revoked);
      });
    },
  };
}

export type RegistrationTokensAdmin = ReturnType<typeof createRegistrationTokensAdmin>;
