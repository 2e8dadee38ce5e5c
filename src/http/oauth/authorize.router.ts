import { auditContext } from '../request/audit-context';
import { Router, type RequestHandler } from 'express';
import { OAuthError, invalidRequest } from '../../errors';
import type { Services } from '../../services';
import type { HttpDeps } from '../http-deps';
import type { AuthorizationRequest } from '../../domain/authorization-request';
import { issuerOf } from '../../domain/platform';
import type { AuthorizeParams } from '../../services/authorize/validate-request';
import { resolvePlatform } from '../middleware/resolve-platform';
import { browserAccounts } from '../session/browser-session';
import { createStepAnswer, redirectToClient } from './authorize-response';
import { redirectPostToGet } from './post-to-get';
import { useUiLocales } from '../middleware/locale';
import { resourceParams } from '../request/resource-params';

/** GET /oauth/authorize (POST: redirectAuthorizePost). */
export function authorizeRouter(s: Services, deps: HttpDeps, rateLimit: (name: string) => RequestHandler): Router {
  const r = Router();
  const answerStep = createStepAnswer(s, deps);
  const handler: RequestHandler = async (req, res) => {
    const platform = res.locals.platform;
    const { body: query, resource } = resourceParams(platform, req.query);
    const { params, repeated } = splitRepeated(query);
    if (repeated.includes('client_id') || repeated.includes('redirect_uri'))
      throw invalidRequest(`parameter "${repeated[0]}" must not be repeated`);
    useUiLocales(req, res, params.ui_locales); // an error page before the interaction speaks its language too
    const client = await s.authorize.resolveClient(platform, params, auditContext(req, { type: 'anonymous' })); // errors → page, never a redirect
    let ar: AuthorizationRequest;
    try {
      if (repeated.length) throw invalidRequest(`parameter "${repeated[0]}" must not be repeated`);
      ar = await s.authorize.validate(platform, client, params, resource);
    } catch (err) {
      if (!(err instanceof OAuthError)) throw err;
      const fake = { redirectUri: params.redirect_uri, state: params.state } as AuthorizationRequest;
      return redirectToClient(
        req,
        res,
        fake,
        { error: err.code, error_description: err.description },
        issuerOf(deps.config.baseUrl, platform),
      );
    }
    ar.restart = restartQuery(params, resource);
    await answerStep(req, res, ar, await s.interaction.current(ar, browserAccounts(req, platform.id)));
  };
  r.get('/oauth/authorize', rateLimit('authorize'), resolvePlatform(s), handler);
  return r;
}

/** The parameters the provider reads; the others are ignored. Typed so none is missed. */
const KNOWN_PARAMS: Record<keyof AuthorizeParams | 'platform_guid' | 'resource', true> = {
  platform_guid: true,
  resource: true,
  response_type: true,
  client_id: true,
  redirect_uri: true,
  scope: true,
  state: true,
  nonce: true,
  code_challenge: true,
  code_challenge_method: true,
  login_hint: true,
  id_token_hint: true,
  action: true,
  prompt: true,
  max_age: true,
  acr_values: true,
  ui_locales: true,
  first_name: true,
  last_name: true,
  phone_number: true,
  response_mode: true,
  request: true,
  request_uri: true,
};
const isKnown = (name: string) => Object.hasOwn(KNOWN_PARAMS, name);

/**
 * The request again, for a form whose session is gone (docs/decisions.md, interaction state): the
 * known parameters only, each within the bound validation just enforced, so junk parameters never
 * reach the session row or the forms.
 */
function restartQuery(params: Record<string, string>, resource: string[] = []): string {
  const query = new URLSearchParams(Object.entries(params).filter(([name]) => isKnown(name)));
  for (const uri of resource) query.append('resource', uri);
  return query.toString();
}

/** POST /oauth/authorize (OIDC Core 3.1.2.1): 303 to the same request as a GET, before any session work. */
export const redirectAuthorizePost = redirectPostToGet(
  '/oauth/authorize',
  isKnown,
  'The authorization request is too large. The application should send it with fewer or shorter parameters.',
);

function splitRepeated(input: unknown): { params: Record<string, string>; repeated: string[] } {
  const params: Record<string, string> = {};
  const repeated: string[] = [];
  for (const [k, v] of Object.entries((input ?? {}) as Record<string, unknown>)) {
    if (Array.isArray(v)) repeated.push(k);
    else if (typeof v === 'string') params[k] = v;
  }
  return { params, repeated };
}
