import { Router } from 'express';
import type { Services } from '../../services';
import { resolvePlatform } from '../middleware/resolve-platform';
import { accountUrl } from '../urls';
import { renderLinkProblem } from '../pages/link-problem.page';
import { renderPage } from '../pages/render';
import { securityOrigin } from '../security-origin';

/**
 * GET /verify-email?platform_guid=G&token=T — the mailed link. Opening it is the proof of the
 * mailbox, so the GET itself verifies (a mail scanner that fetches it proves the same mailbox).
 */
export function emailVerificationRouter(s: Services): Router {
  const r = Router();
  r.get('/verify-email', resolvePlatform(s), async (req, res) => {
    const p = res.locals.platform;
    const token = typeof req.query.token === 'string' ? req.query.token : '';
    const result = await s.account.emailVerification.verify(p.id, token, securityOrigin(req, p.id));
    const toAccount = { href: accountUrl(p.id), label: 'Go to your account' };
    if (result.status === 'verified') {
      return renderPage(res, 'notice', {
        title: 'Email verified', platformName: p.name, heading: 'Your email address is verified',
        message: `Thank you. ${result.user.email} is now verified; apps you sign in to will see it as verified.`, actions: [toAccount],
      });
    }
    if (result.status === 'used' && result.user?.emailVerified) {
      return renderPage(res, 'notice', {
        title: 'Link already used', platformName: p.name, heading: 'This link has already been used',
        message: `Nothing more to do: ${result.user.email} is already verified.`, actions: [toAccount],
      }, 410);
    }
    renderLinkProblem(res, result.status, 'verify', { href: accountUrl(p.id), label: 'Send a new link from your account' });
  });
  return r;
}
