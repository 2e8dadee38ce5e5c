import type { RequestHandler } from 'express';
import type { Services } from '../../services';

/**
 * Browser sessions live in the session table as JSON, out of reach of "sign out everywhere" and
 * password resets. Instead each user has `sessions_valid_after`: on every browser request the
 * accounts this session signed in earlier than that are marked signed out here.
 */
export function revalidateAccounts(s: Services): RequestHandler {
  return async (req, _res, next) => {
    const all = req.session?.accounts;
    if (!all) return next();
    for (const [platformId, accounts] of Object.entries(all)) {
      const fresh = await s.account.security.revalidate(accounts);
      if (fresh !== accounts) req.session.accounts = { ...req.session.accounts, [platformId]: fresh };
    }
    next();
  };
}
