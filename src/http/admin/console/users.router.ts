import { Router, type Request, type Response } from 'express';
import type { Services } from '../../../services';
import type { AdminActor } from '../../../domain/admin';
import { isUuid } from '../../../domain/ids';
import { invalidRequest, OAuthError } from '../../../errors';
import { parseInput } from '../../../services/admin/parse-input';
import { UserListQuery } from '../../../wire/admin/users.schemas';
import {
  presentUser,
  presentUserConsent,
  presentUserDetail,
  presentUserSession,
} from '../../../presenters/admin/user.presenter';
import { presentUserIdentity } from '../../../presenters/admin/upstream-provider.presenter';
import { field, queryParam, submitForm, type FormDone } from './forms';
import { operatorActor } from './operator';
import { renderConsole } from './render';

const PAGE = 50;
const TRAIL = 20;

/** The user's actions on their page: path segment → what it does and the message after it. */
const ACTIONS: Record<string, (s: Services, actor: AdminActor, platformId: string, sub: string) => Promise<string>> = {
  disable: async (s, a, p, sub) => (
    await s.admin.users.disable(a, p, sub),
    'User disabled: signed out everywhere, tokens revoked, no sign-in until enabled.'
  ),
  enable: async (s, a, p, sub) => (await s.admin.users.enable(a, p, sub), 'User enabled: they can sign in again.'),
  unlock: async (s, a, p, sub) => {
    const n = (await s.admin.users.unlock(a, p, sub)).throttles_cleared;
    return n
      ? `Unlocked: ${n} sign-in ${n === 1 ? 'throttle' : 'throttles'} cleared.`
      : 'Nothing to unlock: no sign-in throttle was set.';
  },
  'sign-out': async (s, a, p, sub) => {
    const n = (await s.admin.users.signOut(a, p, sub)).refresh_tokens_revoked;
    return `Signed out everywhere (${n} app ${n === 1 ? 'session' : 'sessions'} revoked).`;
  },
  'password-reset': async (s, a, p, sub) => (
    await s.admin.users.sendPasswordReset(a, p, sub),
    'A password reset mail is queued (see the Mail tab).'
  ),
  'mfa-reset': async (s, a, p, sub) => {
    const r = await s.admin.users.resetMfa(a, p, sub);
    return `Two-step verification reset: ${r.totp_removed ? 'authenticator app' : 'no authenticator app'}, ${r.passkeys_removed} ${r.passkeys_removed === 1 ? 'passkey' : 'passkeys'} and the recovery codes removed.`;
  },
};

const unknownUser = (sub: string) => new OAuthError('not_found', `unknown user "${sub}"`);

/**
 * A platform's users (s.admin.users): search by email; a user's claims, app sessions, consents and
 * audit trail, and the operator's actions on them. Every action is a POST answered 303 with a message.
 */
export function consoleUsersRouter(s: Services): Router {
  const r = Router();
  const base = (req: Request) => `/admin/platforms/${req.params.platformId}/users`;
  const platformId = (req: Request) => String(req.params.platformId);
  /** The :sub of the path: a user id, else not found (never a database error). */
  const subOf = (req: Request) => {
    const sub = String(req.params.sub);
    if (!isUuid(sub)) throw unknownUser(sub);
    return sub;
  };

  async function showList(req: Request, res: Response) {
    const email = queryParam(req, 'email');
    const cursor = queryParam(req, 'cursor');
    let page: { items: Parameters<typeof presentUser>[0][]; nextCursor: string | null } = {
      items: [],
      nextCursor: null,
    };
    let error: string | null = null;
    try {
      const query = parseInput(UserListQuery, { limit: PAGE, email: email || undefined, cursor: cursor || undefined });
      page = await s.admin.users.list(operatorActor(req, res), platformId(req), query);
    } catch (err) {
      if (!(err instanceof OAuthError) || err.status >= 500 || err.status === 404) throw err;
      error = err.description;
    }
    const search = email ? `email=${encodeURIComponent(email)}&` : '';
    renderConsole(
      req,
      res,
      'users',
      {
        title: 'Users',
        users: page.items.map(presentUser),
        email,
        nextUrl: page.nextCursor ? `${base(req)}?${search}cursor=${encodeURIComponent(page.nextCursor)}` : null,
        firstUrl: cursor ? `${base(req)}${email ? `?email=${encodeURIComponent(email)}` : ''}` : null,
        action: base(req),
        error,
      },
      error ? 400 : 200,
    );
  }

  async function showUser(req: Request, res: Response, error: string | null = null, status = 200) {
    const actor = operatorActor(req, res);
    const sub = subOf(req);
    const user = presentUserDetail(await s.admin.users.get(actor, platformId(req), sub));
    const sessions = (await s.admin.users.sessions(actor, platformId(req), sub)).map(presentUserSession);
    const consents = (await s.admin.users.consents(actor, platformId(req), sub)).map(presentUserConsent);
    const identities = (await s.admin.identities.list(actor, platformId(req), sub)).map(presentUserIdentity);
    const trail = await s.audit.list({ platformId: platformId(req), subject: sub }, TRAIL);
    renderConsole(
      req,
      res,
      'user',
      {
        title: user.email,
        user,
        sessions,
        consents,
        identities,
        events: trail.events,
        auditUrl: `/admin/audit?${new URLSearchParams({ platform: platformId(req), subject: sub })}`,
        listUrl: base(req),
        action: `${base(req)}/${sub}`,
        error,
      },
      status,
    );
  }

  /** A POST on the user's page: run it, 303 back to the page with its message; a refusal re-renders the page. */
  const onUser = (req: Request, res: Response, run: (actor: AdminActor, sub: string) => Promise<FormDone>) =>
    submitForm(
      req,
      res,
      () => run(operatorActor(req, res), subOf(req)),
      (error, status) => showUser(req, res, error, status),
    );

  r.get('/admin/platforms/:platformId/users', (req, res) => showList(req, res));
  r.get('/admin/platforms/:platformId/users/:sub', (req, res) => showUser(req, res));

  r.post('/admin/platforms/:platformId/users/:sub/:action', (req, res, next) => {
    const action = ACTIONS[String(req.params.action)];
    if (!action || !Object.hasOwn(ACTIONS, String(req.params.action))) return next();
    return onUser(req, res, async (actor, sub) => ({
      message: await action(s, actor, platformId(req), sub),
      to: `${base(req)}/${sub}`,
    }));
  });

  r.post('/admin/platforms/:platformId/users/:sub/sessions/:sessionId/revoke', (req, res) =>
    onUser(req, res, async (actor, sub) => {
      const sessionId = String(req.params.sessionId);
      if (!isUuid(sessionId)) throw new OAuthError('not_found', `no live session "${sessionId}" of this user`);
      await s.admin.users.revokeSession(actor, platformId(req), sub, sessionId);
      return { message: 'Session revoked: the app must sign the user in again.', to: `${base(req)}/${sub}` };
    }),
  );

  r.post('/admin/platforms/:platformId/users/:sub/consents/:clientId/revoke', (req, res) =>
    onUser(req, res, async (actor, sub) => {
      const clientId = String(req.params.clientId);
      if (!isUuid(clientId)) throw new OAuthError('not_found', `no consent of this user for client "${clientId}"`);
      await s.admin.users.revokeConsent(actor, platformId(req), sub, clientId);
      return { message: "Consent revoked, with the app's tokens for this user.", to: `${base(req)}/${sub}` };
    }),
  );

  // An operator may unlink the last way in (unlike the account page): the page says so.
  r.post('/admin/platforms/:platformId/users/:sub/identities/:identityId/unlink', (req, res) =>
    onUser(req, res, async (actor, sub) => {
      const identityId = String(req.params.identityId);
      if (!isUuid(identityId)) throw new OAuthError('not_found', `no linked identity "${identityId}" of this user`);
      const { provider } = await s.admin.identities.unlink(actor, platformId(req), sub, identityId);
      return { message: `${provider.displayName} account unlinked.`, to: `${base(req)}/${sub}` };
    }),
  );

  r.post('/admin/platforms/:platformId/users/:sub/delete', (req, res) =>
    onUser(req, res, async (actor, sub) => {
      await s.admin.users.get(actor, platformId(req), sub);
      if (field(req, 'confirm') !== 'yes') throw invalidRequest('tick "I understand" to delete the user');
      const { email } = await s.admin.users.remove(actor, platformId(req), sub);
      return { message: `User ${email} deleted.`, to: base(req) };
    }),
  );

  return r;
}
