import { invalidGrant, invalidRequest, invalidTarget } from '../../errors';
import type { ActorClaim } from '../../domain/access-token-claims';
import { ACCESS_TOKEN_TYPE, type IssuedTokens } from '../../domain/tokens';
import * as statements from '../../repositories/access-token-grants.repository';
import type { Deps } from '../deps';
import { logAuditEvent } from '../audit.service';
import type { Resources } from '../resources.service';
import type { Tokens } from '../tokens.service';
import { parseScope } from '../scopes';
import type { ClientCtx } from './authorization-code.grant';
import { requireConfidential } from './client-credentials.grant';
import { accessTokenJti, type TokenIssuer } from './issue-tokens';
import { digest } from '../../crypto/digest';
import { accessExpiryOf, namedResources, resourceScopes } from './resource-grant';
import { audienceOf } from './token-target';

export interface TokenExchangeInput {
  subject_token: string;
  subject_token_type: string;
  actor_token?: string;
  actor_token_type?: string;
  requested_token_type?: string;
  scope?: string;
  /** RFC 8693 §2.1 `audience` and RFC 8707 `resource`: both name resources (their identifier URIs) here. */
  audience?: string[];
  resource?: string[];
}

/** The longest chain of actors an exchanged token carries (RFC 8693 §4.1 nested `act`). */
export const MAX_ACTORS = 5;

/** The subjects of an `act` claim, current actor first; [] when there is none or it is not one. */
function actorsOf(act: unknown): string[] {
  const out: string[] = [];
  for (let a = act; a && typeof a === 'object' && out.length <= MAX_ACTORS; a = (a as { act?: unknown }).act) {
    const sub = (a as { sub?: unknown }).sub;
    if (typeof sub !== 'string') break;
    out.push(sub);
  }
  return out;
}

const actClaimOf = (subs: readonly string[]): ActorClaim | undefined =>
  subs.reduceRight<ActorClaim | undefined>((inner, sub) => (inner ? { sub, act: inner } : { sub }), undefined);

function checkTokenTypes(input: TokenExchangeInput): void {
  const only = `only ${ACCESS_TOKEN_TYPE} is supported`;
  if (input.subject_token_type !== ACCESS_TOKEN_TYPE) throw invalidRequest(`subject_token_type: ${only}`);
  if ((input.actor_token === undefined) !== (input.actor_token_type === undefined))
    throw invalidRequest('actor_token and actor_token_type go together (RFC 8693 §2.1)');
  if (input.actor_token_type !== undefined && input.actor_token_type !== ACCESS_TOKEN_TYPE)
    throw invalidRequest(`actor_token_type: ${only}`);
  if (input.requested_token_type !== undefined && input.requested_token_type !== ACCESS_TOKEN_TYPE)
    throw invalidRequest(`requested_token_type: ${only}`);
}

/**
 * RFC 8693: exchanges a live access token of this platform (the subject token) for one that may only
 * narrow it — for resources of the client's own token-exchange policy (`resource` or `audience`),
 * with scopes the subject token holds and the resource defines, living no longer than the subject
 * token (nor the actor token). It keeps the subject's `sub`, auth_time, acr and amr, and names the
 * exchanging client as `client_id`. An actor token (one issued to this client) makes it a
 * delegation: `act` names the actor, then whoever the actor acted for, then the subject token's own
 * actors (§4.1). It dies with the subject token, its refresh family or its code
 * (docs/decisions.md, "Machine and device clients"). Throws unauthorized_client, invalid_request,
 * invalid_target, invalid_grant, invalid_scope.
 */
export function createTokenExchangeGrant(deps: Deps, issuer: TokenIssuer, resources: Resources, tokens: Tokens) {
  return async function exchangeToken(ctx: ClientCtx, input: TokenExchangeInput): Promise<IssuedTokens> {
    requireConfidential(ctx.client, 'token-exchange');
    checkTokenTypes(input);
    const uris = [...(input.resource ?? []), ...(input.audience ?? [])];
    const named = await namedResources(resources, ctx.platform, uris, 'resource or audience');
    const outside = named.find((r) => !ctx.client.tokenExchangeResources.includes(r.uri));
    if (outside) throw invalidTarget(`this client may not exchange tokens for "${outside.uri}"`);

    const subject = await tokens.findPresentedAccessToken(ctx.platform, input.subject_token);
    if (!subject) throw invalidGrant('subject_token is not an active access token of this platform');
    const actor = input.actor_token
      ? await tokens.findPresentedAccessToken(ctx.platform, input.actor_token)
      : undefined;
    if (input.actor_token && !actor) throw invalidGrant('actor_token is not an active access token of this platform');
    // A client proves who acts with a token of its own: anyone else's it holds would let it name them.
    if (actor && actor.record.clientId !== ctx.client.id)
      throw invalidRequest('actor_token must be an access token issued to this client');
    const actors = [
      ...(actor ? [String(actor.claims.sub), ...actorsOf(actor.claims.act)] : []),
      ...actorsOf(subject.claims.act),
    ];
    if (actors.length > MAX_ACTORS) throw invalidRequest(`at most ${MAX_ACTORS} actors in a delegation chain`);
    const act = actClaimOf(actors);

    const scope = resourceScopes(named, input.scope, parseScope(subject.record.scope)).join(' ');
    await issuer.loadKeys(ctx.platform, ctx.client);
    const prepared = issuer.prepareAccess();
    const byResource = accessExpiryOf(named, prepared.now, deps.config.accessTokenTtlSeconds);
    // It never outlives its subject (nor its actor token).
    const expiresAt = new Date(
      Math.min(byResource.getTime(), subject.record.expiresAt.getTime(), actor?.record.expiresAt.getTime() ?? Infinity),
    );
    if (expiresAt <= prepared.now) throw invalidGrant('subject_token is not an active access token of this platform');
    // It lives by its subject's grant and its own lineage row (docs/decisions.md, "Access tokens without a row").
    const jti = accessTokenJti(prepared, subject.record.anchor, true);
    const audience = named.map((r) => r.uri);
    const sub = typeof subject.claims.sub === 'string' ? subject.claims.sub : subject.record.userId!;
    const audit = {
      ctx: { ...(ctx.audit ?? {}), actorType: 'client' as const, actorId: ctx.client.id, actorName: ctx.client.name },
      event: {
        kind: 'token.exchanged' as const,
        platformId: ctx.platform.id,
        subject: subject.record.userId,
        clientId: ctx.client.id,
        details: {
          sub,
          subject_client_id: subject.record.clientId,
          audience,
          scope,
          ...(actors.length ? { actors } : {}),
          jti,
        },
      },
    };
    const inserted = await statements.insertExchangedToken(
      deps.db,
      {
        platformId: ctx.platform.id,
        clientId: ctx.client.id,
        jtiHash: digest(jti),
        expiresAt,
        now: prepared.now,
        subject: subject.record,
      },
      audit,
    );
    // Revoked since it was read (the check above may have come from the cache).
    if (!inserted) throw invalidGrant('subject_token is not an active access token of this platform');
    logAuditEvent(deps.logger, audit.ctx, audit.event);
    deps.metrics.tokensIssued.inc({ grant: 'token_exchange' });
    const amr = subject.claims.amr;
    return issuer.signAccessOnly(
      { ...prepared, accessExpiresAt: expiresAt },
      {
        jti,
        platform: ctx.platform,
        client: ctx.client,
        sub,
        scope,
        audience: audienceOf(audience)!,
        authTime: typeof subject.claims.auth_time === 'number' ? subject.claims.auth_time : undefined,
        amr: Array.isArray(amr) ? amr.join(' ') : null,
        acr: typeof subject.claims.acr === 'string' ? subject.claims.acr : null,
        act,
        issuedTokenType: ACCESS_TOKEN_TYPE,
      },
    );
  };
}
