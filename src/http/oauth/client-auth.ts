import type { RequestHandler } from 'express';
import type { Services } from '../../services';
import { carriesAssertion } from '../../services/client-credentials';
import { auditContext } from '../request/audit-context';

const bodyField = (body: unknown, name: string) => {
  const v = (body as Record<string, unknown> | undefined)?.[name];
  return typeof v === 'string' ? v : undefined;
};

/**
 * Authenticates the client (client_secret_basic, client_secret_post, private_key_jwt on a standard
 * platform, or none for public clients when allowed). `optional`: only when credentials are
 * present (revocation).
 */
export function clientAuth(s: Services, options: { allowPublic: boolean; optional?: boolean }): RequestHandler {
  return async (req, res, next) => {
    const creds = {
      authorization: req.headers.authorization,
      bodyClientId: bodyField(req.body, 'client_id'),
      bodyClientSecret: bodyField(req.body, 'client_secret'),
      bodyClientAssertionType: bodyField(req.body, 'client_assertion_type'),
      bodyClientAssertion: bodyField(req.body, 'client_assertion'),
    };
    const present =
      /^Basic /i.test(creds.authorization ?? '') ||
      creds.bodyClientSecret !== undefined ||
      carriesAssertion(res.locals.platform, creds);
    if (options.optional && !present) return next();
    const { client } = await s.clientAuth.authenticate(
      res.locals.platform,
      creds,
      options,
      auditContext(req, { type: 'anonymous' }),
    );
    res.locals.client = client;
    next();
  };
}
