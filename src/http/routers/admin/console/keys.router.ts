import { Router, type Request, type Response } from 'express';
import type { Services } from '../../../../services';
import { field, queryParam, submitForm } from '../../../admin-console/forms';
import { operatorActor } from '../../../admin-console/operator';
import { renderConsole } from '../../../admin-console/render';

const PAGE = 50;

/** A platform's signing keys (s.admin.keys): kid, algorithm, status and dates (never the material); rotate, retire. */
export function consoleKeysRouter(s: Services): Router {
  const r = Router();
  const base = (req: Request) => `/admin/platforms/${req.params.platformId}/keys`;

  async function show(req: Request, res: Response, error: string | null = null, status = 200) {
    const cursor = queryParam(req, 'cursor') || undefined;
    const page = await s.admin.keys.list(operatorActor(req, res), String(req.params.platformId), { limit: PAGE, cursor });
    renderConsole(req, res, 'keys', {
      title: 'Keys',
      keys: page.items,
      nextUrl: page.nextCursor ? `${base(req)}?cursor=${encodeURIComponent(page.nextCursor)}` : null,
      firstUrl: cursor ? base(req) : null,
      accessTokenTtlSeconds: s.deps.config.accessTokenTtlSeconds,
      action: base(req),
      error,
    }, status);
  }

  r.get('/admin/platforms/:platformId/keys', (req, res) => show(req, res));

  r.post('/admin/platforms/:platformId/keys/rotate', (req, res) =>
    submitForm(
      req,
      res,
      async () => {
        const { kid } = await s.admin.keys.rotate(operatorActor(req, res), String(req.params.platformId));
        return { message: `New active key ${kid}. The previous key verifies its tokens until they expire.`, to: base(req) };
      },
      (error, status) => show(req, res, error, status),
    ),
  );

  r.post('/admin/platforms/:platformId/keys/retire', (req, res) =>
    submitForm(
      req,
      res,
      async () => {
        const key = await s.admin.keys.retire(operatorActor(req, res), String(req.params.platformId), field(req, 'kid'));
        return { message: `Key ${key.kid} retired: the tokens it signed no longer verify.`, to: base(req) };
      },
      (error, status) => show(req, res, error, status),
    ),
  );

  return r;
}
