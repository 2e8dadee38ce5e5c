import { Router, type RequestHandler } from 'express';
import { OAuthError, invalidRequest } from '../../errors';
import type { Services } from '../../services';
import type { AuthorizationRequest } from '../../domain/authorization-request';
import type { AuthorizeParams } from '../../services/authorize/validate-request';
import { resolvePlatform } from '../middleware/resolve-platform';
import { browserAccounts } from '../browser-session';
import { createStepAnswer, redirectToClient } from '../authorize-response';

/** GET /oauth/authorize (POST: redirectAuthorizePost). */
export function authorizeRouter(s: Services, rateLimit: (name: string) => RequestHandler): Router {
  const r = Router();
  const answerStep = createStepAnswer(s);
  const handler: RequestHandler = async (req, res) => {
    const { params, repeated } = splitRepeated(req.query);
    if (repeated.includes('client_id') || repeated.includes('redirect_uri')) throw invalidRequest(`parameter "${repeated[0]}" must not be repeated`);
    const platform = res.locals.platform;
    const client = await s.authorize.resolveClient(platform, params); // errors → page, never a redirect
    let ar: AuthorizationRequest;
    try {
      if (repeated.length) throw invalidRequest(`parameter "${repeated[0]}" must not be repeated`);
      ar = await s.authorize.validate(platform, client, params);
    } catch (err) {
      if (!(err instanceof OAuthError)) throw err;
      const fake = { redirectUri: params.redirect_uri, state: params.state } as AuthorizationRequest;
      return redirectToClient(req, res, fake, { error: err.code, error_description: err.description }, s.deps.config.baseUrl);
    }
    ar.restart = restartQuery(params);
    await answerStep(req, res, ar, await s.interaction.current(ar, browserAccounts(req, platform.id)));
  };
  r.get('/oauth/authorize', rateLimit('authorize'), resolvePlatform(s), handler);
  return r;
}

/** The parameters the provider reads; the others are ignored (DESIGN §6). Typed so none is missed. */
const KNOWN_PARAMS: Record<keyof AuthorizeParams | 'platform_guid', true> = {
  platform_guid: true, response_type: true, client_id: true, redirect_uri: true, scope: true, state: true, nonce: true,
  code_challenge: true, code_challenge_method: true, login_hint: true, id_token_hint: true, action: true, prompt: true,
  max_age: true, acr_values: true, first_name: true, last_name: true, phone_number: true, response_mode: true, request: true, request_uri: true,
};
const isKnown = (name: string) => Object.hasOwn(KNOWN_PARAMS, name);

/**
 * The request again, for a form whose session is gone (docs/decisions.md, interaction state): the
 * known parameters only, each within the bound validation just enforced, so junk parameters never
 * reach the session row or the forms.
 */
function restartQuery(params: Record<string, string>): string {
  return new URLSearchParams(Object.entries(params).filter(([name]) => isKnown(name))).toString();
}

/** Leaves room for cookies and other headers under Node's 16 KiB header limit, and fits common proxies. */
const MAX_REDIRECT_URL = 8192;

/**
 * POST /oauth/authorize (OIDC Core 3.1.2.1) answers 303 with the same request as a GET, mounted
 * before the browser session (issue 10 §4). A cross-site form POST arrives without the SameSite=Lax
 * session cookie; handled here it would start a new session whose cookie replaces the browser's,
 * signing every account out. The top-level GET that follows does carry the cookie. Every POST is
 * redirected, not only cookie-less or cross-site ones: one rule, no header guessing, and the GET
 * applies every check. Repeated parameters stay repeated (invalid_request there); platform_guid may
 * sit in the query (DESIGN §4). Ignored parameters are dropped when the URL would grow too long.
 */
export const redirectAuthorizePost: RequestHandler = (req, res) => {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries((req.body ?? {}) as Record<string, unknown>)) {
    for (const v of [value].flat()) if (typeof v === 'string') query.append(name, v);
  }
  for (const v of [req.query.platform_guid].flat()) {
    if (typeof v === 'string' && !query.getAll('platform_guid').includes(v)) query.append('platform_guid', v); // different → repeated → refused
  }
  const url = () => `/oauth/authorize?${query}`;
  if (url().length > MAX_REDIRECT_URL) for (const name of [...new Set(query.keys())]) if (!isKnown(name)) query.delete(name);
  if (url().length > MAX_REDIRECT_URL) throw invalidRequest('The authorization request is too large. The application should send it with fewer or shorter parameters.');
  res.set('Cache-Control', 'no-store').redirect(303, url());
};

function splitRepeated(input: unknown): { params: Record<string, string>; repeated: string[] } {
  const params: Record<string, string> = {};
  const repeated: string[] = [];
  for (const [k, v] of Object.entries((input ?? {}) as Record<string, unknown>)) {
    if (Array.isArray(v)) repeated.push(k);
    else if (typeof v === 'string') params[k] = v;
  }
  return { params, repeated };
}
