import { Router, type Request, type Response } from 'express';
import type { Services } from '../../../../services';
import { parseInput } from '../../../../services/admin/parse-input';
import { PlatformCreate } from '../../../../services/admin/schemas/platforms.schemas';
import { field, queryParam, submitForm } from '../../../admin-console/forms';
import { operatorActor } from '../../../admin-console/operator';
import { renderConsole } from '../../../admin-console/render';

const PAGE = 50;

/** Platforms: the list (a platform-scoped operator sees its own only) and, for global operators, "Create platform". */
export function consolePlatformsRouter(s: Services): Router {
  const r = Router();

  async function show(req: Request, res: Response, form: { name?: string; error?: string } = {}, status = 200) {
    const actor = operatorActor(req, res);
    const cursor = queryParam(req, 'cursor') || undefined;
    const page = await s.admin.platforms.list(actor, { limit: PAGE, cursor });
    renderConsole(req, res, 'platforms', {
      title: 'Platforms',
      platforms: page.items,
      nextUrl: page.nextCursor ? `/admin/platforms?cursor=${encodeURIComponent(page.nextCursor)}` : null,
      firstUrl: cursor ? '/admin/platforms' : null,
      canCreate: actor.platformId === null,
      name: form.name ?? '',
      error: form.error ?? null,
    }, status);
  }

  r.get('/admin/platforms', (req, res) => show(req, res));

  r.post('/admin/platforms', (req, res) =>
    submitForm(
      req,
      res,
      async () => {
        const { platform } = await s.admin.platforms.create(operatorActor(req, res), parseInput(PlatformCreate, { name: field(req, 'name') }));
        return { message: `Platform "${platform.name}" created, with its first signing key.`, to: `/admin/platforms/${platform.id}` };
      },
      (error, status) => show(req, res, { name: field(req, 'name'), error }, status),
    ),
  );

  return r;
}
