import { Router, type Request, type Response } from 'express';
import type { Services } from '../../../../services';
import { submitForm } from '../../../admin-console/forms';
import { operatorActor } from '../../../admin-console/operator';
import { renderConsole } from '../../../admin-console/render';

/** A platform's signing keys: kid, algorithm, status and dates (never a secret); "Rotate key". */
export function consoleKeysRouter(s: Services): Router {
  const r = Router();
  const base = (req: Request) => `/admin/platforms/${req.params.platformId}/keys`;

  async function show(req: Request, res: Response, error: string | null = null, status = 200) {
    renderConsole(req, res, 'keys', {
      title: 'Keys',
      keys: await s.consoleKeys.list(operatorActor(req, res), String(req.params.platformId)),
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
        const kid = await s.consoleKeys.rotate(operatorActor(req, res), String(req.params.platformId));
        return { message: `New active key ${kid}. The previous key verifies its tokens until they expire.`, to: base(req) };
      },
      (error, status) => show(req, res, error, status),
    ),
  );

  return r;
}
