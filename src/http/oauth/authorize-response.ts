import type { Request, Response } from 'express';
import type { AuthorizationRequest } from '../../domain/authorization-request';
import { issuerOf } from '../../domain/platform';
import { invalidRequest } from '../../errors';
import type { FinalStep, Step } from '../../domain/interaction';
import type { Services } from '../../services';
import type { HttpDeps } from '../http-deps';
import { browserId, endInteraction, saveInteraction } from '../session/browser-session';
import { interactionUrl } from '../urls';
import { renderContinuePage } from '../pages/continue.page';
import { renderDeviceOutcome } from '../pages/device.page';
import { auditContext } from '../request/audit-context';

/** The authorization response's URL at the client (RFC 6749 §4.1.2, RFC 9207 `iss`). */
function authorizationResponseUrl(
  ar: Pick<AuthorizationRequest, 'redirectUri' | 'state'>,
  params: Record<string, string>,
  issuer: string,
): string {
  const url = new URL(ar.redirectUri);
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  if (ar.state !== undefined) url.searchParams.set('state', ar.state);
  url.searchParams.set('iss', issuer);
  return url.toString();
}

/** Redirects to the client with the authorization response (RFC 6749 §4.1.2, RFC 9207 `iss`). */
export function redirectToClient(
  req: Request,
  res: Response,
  ar: Pick<AuthorizationRequest, 'redirectUri' | 'state'>,
  params: Record<string, string>,
  issuer: string,
) {
  res
    .set('Cache-Control', 'no-store')
    .redirect(req.method === 'POST' ? 303 : 302, authorizationResponseUrl(ar, params, issuer));
}

/**
 * How the response reaches the client. `redirect`: a redirect. `page`: the request may be a redirect
 * of a form on another site (the upstream sign-in's callback, reached from the upstream's sign-in or
 * consent form), whose CSP form-action Chromium applies to every redirect that follows: a redirect
 * to a client on another origin than ours would be blocked there, so a page moves on instead
 * (continue.page.ts). To our own origin the other site allowed the redirect that brought it here.
 */
export type ClientHop = 'redirect' | 'page';

/**
 * Answers a step decided by a transition (or by /oauth/authorize): the code or the error goes to
 * the client (a device's interaction: the device, answerDevice) and the interaction ends; a page step is kept with the interaction and the browser is
 * sent to it (post/redirect/get).
 */
export function createStepAnswer(s: Services, deps: HttpDeps) {
  const { baseUrl } = deps.config;
  const ownOrigin = new URL(baseUrl).origin;
  const toClient = (
    req: Request,
    res: Response,
    ar: AuthorizationRequest,
    params: Record<string, string>,
    issuer: string,
    hop: ClientHop,
  ) => {
    if (hop === 'redirect' || new URL(ar.redirectUri).origin === ownOrigin)
      return redirectToClient(req, res, ar, params, issuer);
    renderContinuePage(res, ar.clientName, authorizationResponseUrl(ar, params, issuer));
  };
  /**
   * RFC 8628: a device's interaction ends here rather than at a client: the person's answer is
   * recorded for the device's next poll, and the page says to return to the device (or why not).
   */
  const answerDevice = async (req: Request, res: Response, ar: AuthorizationRequest, step: FinalStep) => {
    const ctx = auditContext(req, { type: 'user' });
    const outcome =
      step.kind === 'complete'
        ? await s.device.approve(ar, step.user, step.authTime, step.amr ?? ['pwd'], ctx)
        : await s.device.deny(ar, ar.userId ?? null, ctx);
    endInteraction(req, ar.id);
    renderDeviceOutcome(
      res,
      ar.clientName,
      outcome === 'recorded' ? (step.kind === 'complete' ? 'approved' : 'denied') : outcome,
    );
  };
  return async function answerStep(
    req: Request,
    res: Response,
    ar: AuthorizationRequest,
    step: Step,
    hop: ClientHop = 'redirect',
  ): Promise<void> {
    if (step.kind === 'complete' || step.kind === 'error') {
      if (ar.device) return answerDevice(req, res, ar, step);
      const issuer = await issuerOfPlatform(s, baseUrl, ar.platformId);
      if (step.kind === 'error') {
        endInteraction(req, ar.id);
        return toClient(req, res, ar, { error: step.code, error_description: step.description }, issuer, hop);
      }
      const code = await s.authorize.issueCode(ar, step.user, step.authTime, browserId(req), step.amr);
      endInteraction(req, ar.id);
      return toClient(req, res, ar, { code }, issuer, hop);
    }
    saveInteraction(req, ar);
    res.redirect(303, interactionUrl(ar.id));
  };
}

export type StepAnswer = ReturnType<typeof createStepAnswer>;

/** RFC 9207: the response's `iss` is the platform's issuer. */
async function issuerOfPlatform(s: Services, baseUrl: string, platformId: string): Promise<string> {
  const platform = await s.platforms.findPlatform(platformId);
  if (!platform) throw invalidRequest(`unknown platform "${platformId}"`); // deleted during the interaction
  return issuerOf(baseUrl, platform);
}
