import { Router, type Request, type RequestHandler, type Response } from 'express';
import { OAuthError, invalidRequest } from '../../errors';
import type { Services } from '../../services';
import type { AuthorizationRequest } from '../../services/authorize/authorization-request';
import { resolvePlatform } from '../middleware/resolve-platform';
import { accountsOf, browserId, endInteraction, saveInteraction } from '../browser-session';

/** Redirects to the client with the authorization response (RFC 6749 §4.1.2, RFC 9207 `iss`). */
export function redirectToClient(req: Request, res: Response, ar: AuthorizationRequest, params: Record<string, string>, issuer: string) {
  const url = new URL(ar.redirectUri);
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  if (ar.state !== undefined) url.searchParams.set('state', ar.state);
  url.searchParams.set('iss', issuer);
  res.set('Cache-Control', 'no-store').redirect(req.method === 'POST' ? 303 : 302, url.toString());
}

/** Runs the next step: a code or an error back to the client, or the page that is due. */
export function createAdvance(s: Services) {
  const issuer = s.deps.config.baseUrl;
  return async function advance(req: Request, res: Response, ar: AuthorizationRequest) {
    const step = await s.authorize.nextStep(ar, accountsOf(req, ar.platformId));
    if (step.kind === 'complete') {
      const code = await s.authorize.issueCode(ar, step.user, step.authTime, browserId(req));
      endInteraction(req, ar.id);
      return redirectToClient(req, res, ar, { code }, issuer);
    }
    if (step.kind === 'error') {
      endInteraction(req, ar.id);
      return redirectToClient(req, res, ar, { error: step.code, error_description: step.description }, issuer);
    }
    saveInteraction(req, ar);
    res.redirect(303, `/interaction/${ar.id}`);
  };
}

/** GET and POST /oauth/authorize (OIDC Core 3.1.2.1). */
export function authorizeRouter(s: Services, rateLimit: (name: string) => RequestHandler): Router {
  const r = Router();
  const advance = createAdvance(s);
  const handler: RequestHandler = async (req, res) => {
    const raw = req.method === 'POST' ? req.body : req.query;
    const { params, repeated } = splitRepeated(raw);
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
    ar.restart = new URLSearchParams(params).toString();
    await advance(req, res, ar);
  };
  r.get('/oauth/authorize', rateLimit('authorize'), resolvePlatform(s), handler);
  r.post('/oauth/authorize', rateLimit('authorize'), resolvePlatform(s), handler);
  return r;
}

function splitRepeated(input: unknown): { params: Record<string, string>; repeated: string[] } {
  const params: Record<string, string> = {};
  const repeated: string[] = [];
  for (const [k, v] of Object.entries((input ?? {}) as Record<string, unknown>)) {
    if (Array.isArray(v)) repeated.push(k);
    else if (typeof v === 'string') params[k] = v;
  }
  return { params, repeated };
}
