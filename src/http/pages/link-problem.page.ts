import type { Response } from 'express';
import type { LinkStatus } from '../../services/account/account-tokens';
import { renderPage } from './render';

/** What a used, expired or unknown link says: a clear page, never a bare error. */
export function renderLinkProblem(res: Response, status: Exclude<LinkStatus, 'valid'> | 'changed', kind: 'reset' | 'verify', retry: { href: string; label: string }) {
  const what = kind === 'reset' ? 'password reset link' : 'verification link';
  const text = {
    used: { heading: 'This link has already been used', message: `Each ${what} works only once.` },
    expired: { heading: 'This link has expired', message: kind === 'reset' ? 'Password reset links work for 30 minutes.' : 'Verification links work for 24 hours.' },
    invalid: { heading: 'This link is not valid', message: `The ${what} is incomplete or unknown. Check that you copied the whole address.` },
    changed: { heading: 'This link is for another email address', message: 'The email address of the account changed after this link was sent.' },
  }[status];
  renderPage(res, 'notice', {
    title: text.heading, icon: 'error', ...text, details: kind === 'reset' ? 'You can ask for a new link.' : null, actions: [retry],
  }, status === 'invalid' ? 400 : 410);
}
