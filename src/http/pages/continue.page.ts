import type { Response } from 'express';
import { renderPage } from './render';

/**
 * "Continuing to {name}…": a page that moves the browser on by a 0-second refresh, for a hop a
 * redirect cannot make. Chromium applies the CSP form-action of the page whose form started a
 * navigation to every redirect that follows, and a refresh is a new navigation that form-action
 * does not govern. No script; a link for browsers that do not refresh. Used by the upstream
 * sign-in, both ways: to an upstream whose authorization endpoint is on another origin than its
 * issuer, and from the upstream's callback on to the app (the texts are the upstream catalog's).
 */
export function renderContinuePage(res: Response, targetName: string, url: string): void {
  renderPage(res, 'continue', {
    title: res.locals.t('upstream:continuing.title', { provider: targetName }),
    targetName,
    url,
    refreshUrl: url,
  });
}
