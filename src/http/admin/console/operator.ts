import type { Request, RequestHandler, Response } from 'express';
import type { Services } from '../../../services';
import type { HttpDeps } from '../../http-deps';
import type { AdminActor } from '../../../domain/admin';
import type { Operator } from '../../../domain/operator';
import { auditContext } from '../../request/audit-context';
import { CONSOLE_ABSOLUTE_MS, CONSOLE_IDLE_MS, endConsoleSession } from './session';

declare global {
  namespace Express {
    interface Locals {
      /** The signed-in console operator (requireOperator). */
      operator?: Operator;
    }
  }
}

export const SIGN_IN_PATH = '/admin/sign-in';

/**
 * Every console page but the sign-in's: a session past both factors, within 8 hours of the sign-in
 * and 30 minutes of the last request, of an operator still enabled. Anything else goes to sign-in.
 */
export function requireOperator(s: Services, deps: HttpDeps): RequestHandler {
  return async (req, res, next) => {
    const c = req.session?.console;
    if (!c || c.stage !== 'signed_in') return res.redirect(303, SIGN_IN_PATH);
    const now = deps.now().getTime();
    const operator = await s.operators.findActive(c.operatorId);
    if (now - c.startedAt > CONSOLE_ABSOLUTE_MS || now - c.lastSeenAt > CONSOLE_IDLE_MS || !operator) {
      await endConsoleSession(req);
      return res.redirect(303, `${SIGN_IN_PATH}?expired=1`);
    }
    c.lastSeenAt = now;
    res.locals.operator = operator;
    next();
  };
}

/** The operator as the admin services' actor: its scope, and the request's audit context. */
export function operatorActor(req: Request, res: Response): AdminActor {
  const operator = res.locals.operator!;
  return {
    ...auditContext(req, { type: 'operator', id: operator.id, name: operator.email }),
    actorType: 'operator',
    platformId: operator.platformId,
  };
}

/** Shows `message` on the next console page (after a form's 303). */
export function flash(req: Request, message: string): void {
  if (req.session.console) req.session.console.flash = message;
}
