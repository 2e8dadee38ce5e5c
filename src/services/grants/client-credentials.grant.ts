import { OAuthError } from '../../errors';
import { wireClientId, type Client } from '../../domain/client';
import type { IssuedTokens } from '../../domain/tokens';
import * as statements from '../../repositories/access-token-grants.repository';
import type { Deps } from '../deps';
import { logAuditEvent } from '../audit.service';
import type { Resources } from '../resources.service';
import type { ClientCtx } from './authorization-code.grant';
import { accessTokenJti, type TokenIssuer } from './issue-tokens';
import { accessExpiryOf, namedResources, resourceScopes } from './resource-grant';
import { audienceOf } from './token-target';

export interface ClientCredentialsInput {
  scope?: string;
  /** RFC 8707 §2: the resources the token is for; required (docs/decisions.md, "Machine and device clients"). */
  resource?: string[];
}

/** The grants that act with no person present: the client must prove itself with a secret or a key. */
export function requireConfidential(client: Client, grant: string): void {
  if (client.type !== 'confidential')
    throw new OAuthError('unauthorized_client', `the ${grant} grant is for confidential clients only`);
}

/**
 * RFC 6749 §4.4: an access token for the client itself, for the resources it names (RFC 8707), with
 * the scopes it asks for among theirs (default: their default scopes) and the shortest of their
 * lifetimes. RFC 9068 §2.2: `sub` is the client's id, no auth_time, acr or amr. No refresh token
 * (§4.4.3), no ID token. One statement stores the token and its audit event.
 * Throws unauthorized_client, invalid_target, invalid_scope, invalid_request.
 */
export function createClientCredentialsGrant(deps: Deps, issuer: TokenIssuer, resources: Resources) {
  return async function issueClientCredentials(ctx: ClientCtx, input: ClientCredentialsInput): Promise<IssuedTokens> {
    requireConfidential(ctx.client, 'client_credentials');
    const named = await namedResources(resources, ctx.platform, input.resource, 'resource');
    const scope = resourceScopes(named, input.scope).join(' ');
    await issuer.loadKeys(ctx.platform, ctx.client);
    const prepared = issuer.prepareAccess();
    const expiresAt = accessExpiryOf(named, prepared.now, deps.config.accessTokenTtlSeconds);
    const audience = named.map((r) => r.uri);
    // It lives by the client (docs/decisions.md, "Access tokens without a row").
    const jti = accessTokenJti(prepared, { kind: 'client', id: ctx.client.id });
    const audit = {
      ctx: { ...(ctx.audit ?? {}), actorType: 'client' as const, actorId: ctx.client.id, actorName: ctx.client.name },
      event: {
        kind: 'client_credentials.issued' as const,
        platformId: ctx.platform.id,
        clientId: ctx.client.id,
        details: { resource: audience, scope, jti, expires_at: expiresAt.toISOString() },
      },
    };
    await statements.recordClientToken(deps.db, audit, prepared.now);
    logAuditEvent(deps.logger, audit.ctx, audit.event);
    deps.metrics.tokensIssued.inc({ grant: 'client_credentials' });
    return issuer.signAccessOnly(
      { ...prepared, accessExpiresAt: expiresAt },
      {
        jti,
        platform: ctx.platform,
        client: ctx.client,
        sub: wireClientId(ctx.client),
        scope,
        audience: audienceOf(audience)!,
      },
    );
  };
}
