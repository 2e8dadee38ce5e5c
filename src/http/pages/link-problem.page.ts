import type { Response } from 'express';
import type { LinkStatus } from '../../services/account/account-tokens';
import { renderPage } from './render';

/** What a used, expired or unknown link says (in the page's language): a clear page, never a bare error. */
export function renderLinkProblem(
  res: Response,
  status: Exclude<LinkStatus, 'valid'> | 'changed',
  kind: 'reset' | 'verify',
  retry: { href: string; label: string },
) {
  const t = res.locals.t;
  const reset = kind === 'reset';
  const text = {
    used: {
      heading: t('account:linkProblem.usedHeading'),
      message: t(reset ? 'account:linkProblem.usedReset' : 'account:linkProblem.usedVerify'),
    },
    expired: {
      heading: t('account:linkProblem.expiredHeading'),
      message: t(reset ? 'account:linkProblem.expiredReset' : 'account:linkProblem.expiredVerify'),
    },
    invalid: {
      heading: t('account:linkProblem.invalidHeading'),
      message: t(reset ? 'account:linkProblem.invalidReset' : 'account:linkProblem.invalidVerify'),
    },
    changed: { heading: t('account:linkProblem.changedHeading'), message: t('account:linkProblem.changedMessage') },
  }[status];
  renderPage(
    res,
    'notice',
    {
      title: text.heading,
      icon: 'error',
      ...text,
      details: reset ? t('account:linkProblem.askNew') : null,
      actions: [retry],
    },
    status === 'invalid' ? 400 : 410,
  );
}
