import { Router, type RequestHandler } from 'express';
import { z } from 'zod';
import { OAuthError, invalidRequest } from '../../errors';
import { presentTokenResponse } from '../../presenters/token.presenter';
import type { Services } from '../../services';
import { clientAuth } from './client-auth';
import type { RateLimits } from '../middleware/rate-limit';
import { requireFormBody } from '../middleware/form-body';
import { noStore } from '../middleware/no-store';
import { resolvePlatform } from '../middleware/resolve-platform';
import { param, parseOAuth } from '../request/params';
import { auditContext } from '../request/audit-context';
import { resourceParams } from '../request/resource-params';
import {
  DEFAULT_GRANT_TYPES,
  DEVICE_CODE_GRANT,
  TOKEN_EXCHANGE_GRANT,
  isGrantType,
  type Client,
  type GrantType,
} from '../../domain/client';
import type { Platform } from '../../domain/platform';
import type { AuditContext } from '../../domain/audit';
import type { IssuedTokens } from '../../domain/tokens';

// Built once: a zod schema compiles itself on first use, so one made per request costs more than the grant's own work.
const CodeBody = z
  .object({ code: param(512), redirect_uri: param(2048), code_verifier: z.string().max(256).optional() })
  .passthrough();
const RefreshBody = z.object({ refresh_token: param(512), scope: z.string().max(1024).optional() }).passthrough();
const DeviceCodeBody = z.object({ device_code: param(512) }).passthrough();
const ClientCredentialsBody = z.object({ scope: z.string().max(1024).optional() }).passthrough();
const TokenExchangeBody = z
  .object({
    subject_token: param(4096),
    subject_token_type: param(256),
    actor_token: param(4096).optional(),
    actor_token_type: param(256).optional(),
    requested_token_type: param(256).optional(),
    scope: z.string().max(1024).optional(),
  })
  .passthrough();
const GrantType = z.object({ grant_type: param(64) });

type GrantContext = { platform: Platform; client: Client; audit: AuditContext };
type GrantHandler = (
  s: Services,
  ctx: GrantContext,
  body: Record<string, unknown>,
  resource: string[] | undefined,
) => Promise<IssuedTokens>;

/** The grants the token endpoint answers, each parsing its own parameters; a seed platform only the spec's two. */
const GRANTS: Partial<Record<GrantType, GrantHandler>> = {
  authorization_code: (s, ctx, body, resource) =>
    s.grants.exchangeAuthorizationCode(ctx, { ...parseOAuth(CodeBody, body), resource }),
  refresh_token: (s, ctx, body, resource) =>
    s.grants.rotateRefreshToken(ctx, { ...parseOAuth(RefreshBody, body), resource }),
  // RFC 8628 §3.4: a device polling with the device code it was given.
  [DEVICE_CODE_GRANT]: (s, ctx, body, resource) =>
    s.grants.redeemDeviceCode(ctx, { ...parseOAuth(DeviceCodeBody, body), resource }),
  client_credentials: (s, ctx, body, resource) =>
    s.grants.issueClientCredentials(ctx, { ...parseOAuth(ClientCredentialsBody, body), resource }),
  [TOKEN_EXCHANGE_GRANT]: (s, ctx, body, resource) => {
    // RFC 8693 §2.1: `audience` may be repeated, like `resource`.
    const { audience, ...rest } = body;
    return s.grants.exchangeToken(ctx, {
      ...parseOAuth(TokenExchangeBody, rest),
      audience: audienceParam(audience),
      resource,
    });
  },
};

function audienceParam(value: unknown): string[] | undefined {
  if (value === undefined) return undefined;
  const values = [value].flat();
  if (values.some((v) => typeof v !== 'string' || v.length === 0 || v.length > 2048))
    throw invalidRequest('parameter "audience" is malformed');
  return values as string[];
}

const handlerOf = (platform: Platform, grantType: string): GrantHandler | undefined =>
  isGrantType(grantType) && (platform.signingProfile === 'standard' || DEFAULT_GRANT_TYPES.includes(grantType))
    ? GRANTS[grantType]
    : undefined;

/** POST /oauth/token — parse, delegate, present. Counted against the client once it has authenticated. */
export function tokenRouter(s: Services, rateLimit: RateLimits): Router {
  const r = Router();
  const limit = rateLimit.perClient('token');
  const supportedGrant: RequestHandler = (req, res, next) => {
    // A repeated parameter is refused here, before the client authenticates, as always; on a standard
    // platform `resource` and `audience` may be repeated (RFC 8707 §2, RFC 8693 §2.1).
    const { resource: _resource, audience: _audience, ...single } = req.body as Record<string, unknown>;
    const { grant_type } = parseOAuth(GrantType, res.locals.platform.signingProfile === 'standard' ? single : req.body);
    if (!handlerOf(res.locals.platform, grant_type)) {
      throw new OAuthError('unsupported_grant_type', `grant_type "${grant_type.slice(0, 64)}" is not supported`);
    }
    next();
  };
  // RFC 6749 §5.2: a grant the client is not registered for (RFC 7591 §2 grant_types).
  const allowedGrant: RequestHandler = (req, res, next) => {
    const client: Client = res.locals.client!;
    if (!client.grantTypes.includes(req.body.grant_type))
      throw new OAuthError('unauthorized_client', `this client is not allowed the ${req.body.grant_type} grant`);
    next();
  };
  const issue: RequestHandler = async (req, res) => {
    const ctx: GrantContext = {
      platform: res.locals.platform,
      client: res.locals.client!,
      audit: auditContext(req, { type: 'user' }),
    };
    const { body, resource } = resourceParams(ctx.platform, req.body);
    const issued = await handlerOf(ctx.platform, String(body.grant_type))!(s, ctx, body, resource);
    await s.registration.markFirstUse(ctx.client); // a self-registered client in use is not purged; a no-op for the others
    res.json(presentTokenResponse(issued));
  };
  r.post(
    '/oauth/token',
    noStore,
    requireFormBody,
    resolvePlatform(s),
    supportedGrant,
    clientAuth(s, { allowPublic: true }),
    allowedGrant,
    limit.authenticated,
    issue,
    limit.failed,
  );
  return r;
}
