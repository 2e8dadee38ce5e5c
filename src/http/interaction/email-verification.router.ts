import { Router } from 'express';
import type { Services } from '../../services';
import { resolvePlatform } from '../middleware/resolve-platform';
import { accountUrl } from '../urls';
import { renderLinkProblem } from '../pages/link-problem.page';
import { renderPage } from '../pages/render';
import { securityOrigin } from '../request/security-origin';

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
    const t = res.locals.t;
    const toAccount = { href: accountUrl(p.id), label: t('account:emailVerified.toAccount') };
    if (result.status === 'verified') {
      return renderPage(res, 'notice', {
        title: t('account:emailVerified.title'),
        platformName: p.name,
        heading: t('account:emailVerified.heading'),
        message: t('account:emailVerified.message', { email: result.user.email }),
        actions: [toAccount],
      });
    }
    if (result.status === 'used' && result.user?.emailVerified) {
      return renderPage(
        res,
        'notice',
        {
          title: t('account:emailVerified.usedTitle'),
          platformName: p.name,
          heading: t('account:emailVerified.usedHeading'),
          message: t('account:emailVerified.usedMessage', { email: result.user.email }),
          actions: [toAccount],
        },
        410,
      );
    }
    renderLinkProblem(res, result.status, 'verify', {
      href: accountUrl(p.id),
      label: t('account:emailVerified.sendNew'),
    });
  });
  return r;
}
