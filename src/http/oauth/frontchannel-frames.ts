import type { Request, Response } from 'express';
import type { Platform } from '../../domain/platform';
import type { Services } from '../../services';
import { browserId } from '../session/browser-session';
import { allowFramesOf } from '../middleware/security-headers';

declare module 'express-session' {
  interface SessionData {
    /** Front-channel logout URLs for the page after a sign-out's redirect (the account page's signed-out page). */
    frontchannelFrames: { platformId: string; urls: string[] };
  }
}

declare global {
  namespace Express {
    interface Locals {
      /** Front-Channel Logout 1.0 iframes of this page (views/partials/frontchannel-frames.ejs, from foot.ejs). */
      frontchannelFrames?: string[];
    }
  }
}

/**
 * The front-channel logout URLs of these users' sign-ins in this browser: read BEFORE signing out
 * (sign-out forgets which applications the session reached). No user: no browser id is made.
 */
export async function frontchannelUrlsBeforeSignOut(
  s: Services,
  req: Request,
  platform: Platform,
  userIds: string[],
): Promise<string[]> {
  if (userIds.length === 0) return [];
  return s.frontchannelLogout.urlsFor(platform, userIds, browserId(req));
}

/** This response's page carries the iframes (and its CSP frame-src their origins); the framed URLs. */
export function showFrontchannelFrames(res: Response, urls: string[]): string[] {
  const framed = allowFramesOf(res, urls);
  if (framed.length > 0) res.locals.frontchannelFrames = framed;
  return framed;
}

/** Keeps the URLs for the page a redirect leads to (takeFrontchannelFrames there). */
export function stashFrontchannelFrames(req: Request, platformId: string, urls: string[]): void {
  if (urls.length > 0) req.session.frontchannelFrames = { platformId, urls };
}

/** The stashed URLs of this platform, shown on this response's page once. */
export function takeFrontchannelFrames(req: Request, res: Response, platformId: string): string[] {
  const stashed = req.session.frontchannelFrames;
  if (!stashed || stashed.platformId !== platformId) return [];
  delete req.session.frontchannelFrames;
  return showFrontchannelFrames(res, stashed.urls);
}
