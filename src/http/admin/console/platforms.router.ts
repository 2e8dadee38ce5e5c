import { Router, type Request, type Response } from 'express';
import type { Services } from '../../../services';
import { parseInput } from '../../../services/admin/parse-input';
import { PlatformCreate } from '../../../wire/admin/platforms.schemas';
import { SIGNING_PROFILES } from '../../../domain/platform';
import { field, queryParam, submitForm } from './forms';
import { operatorActor } from './operator';
import { renderConsole } from './render';

const PAGE = 50;

/** The create form's fields, as typed. */
interface CreateForm {
  name: string;
  signing_profile: string;
}

/** Platforms: the list (a platform-scoped operator sees its own only) and, for global operators, "Create platform" with its signing profile. */
export function consolePlatformsRouter(s: Services): Router {
  const r = Router();

  async function show(req: Request, res: Response, form: { values?: CreateForm; error?: string } = {}, status = 200) {
    const actor = operatorActor(req, res);
    const cursor = queryParam(req, 'cursor') || undefined;
    const page = await s.admin.platforms.list(actor, { limit: PAGE, cursor });
    renderConsole(
      req,
      res,
      'platforms',
      {
        title: 'Platforms',
        platforms: page.items,
        nextUrl: page.nextCursor ? `/admin/platforms?cursor=${encodeURIComponent(page.nextCursor)}` : null,
        firstUrl: cursor ? '/admin/platforms' : null,
        canCreate: actor.platformId === null,
        values: form.values ?? { name: '', signing_profile: 'seed' },
        profiles: SIGNING_PROFILES,
        error: form.error ?? null,
      },
      status,
    );
  }

  r.get('/admin/platforms', (req, res) => show(req, res));

  r.post('/admin/platforms', (req, res) => {
    const values: CreateForm = { name: field(req, 'name'), signing_profile: field(req, 'signing_profile') };
    return submitForm(
      req,
      res,
      async () => {
        // An absent choice is the API's default (seed); a present one must be a profile, named in the message if not.
        const input = parseInput(PlatformCreate, {
          name: values.name,
          ...(values.signing_profile ? { signing_profile: values.signing_profile } : {}),
        });
        const { platform } = await s.admin.platforms.create(operatorActor(req, res), input);
        const keys =
          platform.signingProfile === 'standard'
            ? 'its HS512, RS256, ES256 and EdDSA signing keys'
            : 'its HS512 signing key';
        return {
          message: `Platform "${platform.name}" created (${platform.signingProfile} profile), with ${keys}.`,
          to: `/admin/platforms/${platform.id}`,
        };
      },
      (error, status) => show(req, res, { values, error }, status),
    );
  });

  return r;
}
