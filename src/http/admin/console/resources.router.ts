import { Router, type Request, type Response } from 'express';
import type { Services } from '../../../services';
import { RESOURCE_TOKEN_TTL_MAX, RESOURCE_TOKEN_TTL_MIN } from '../../../domain/resource';
import { invalidRequest } from '../../../errors';
import { parseInput } from '../../../services/admin/parse-input';
import { ResourceCreate, ResourceParams, ResourceUpdate } from '../../../wire/admin/resources.schemas';
import { presentResource } from '../../../presenters/admin/resource.presenter';
import { field, submitForm } from './forms';
import { operatorActor } from './operator';
import { renderConsole } from './render';

/** One scope per line: its name, a space, then its description (a scope name has no spaces). */
function scopesOf(text: string): Array<{ name: string; description: string }> {
  return text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter(Boolean)
    .map((line) => {
      const space = line.search(/\s/);
      return space < 0
        ? { name: line, description: '' }
        : { name: line.slice(0, space), description: line.slice(space + 1).trim() };
    });
}

const scopeLines = (scopes: Array<{ name: string; description: string }>) =>
  scopes.map((s) => (s.description ? `${s.name} ${s.description}` : s.name)).join('\n');

/** The lifetime field: empty → the platform's default (null); else a whole number of seconds. */
function ttlOf(text: string): number | null {
  if (!text) return null;
  if (!/^\d+$/.test(text))
    throw invalidRequest(
      `access_token_ttl_seconds: a whole number of seconds from ${RESOURCE_TOKEN_TTL_MIN} to ${RESOURCE_TOKEN_TTL_MAX}, or empty for the platform's default`,
    );
  return Number(text);
}

/** The form as typed, to show it again after a refusal. */
const formOf = (req: Request) => ({
  uri: field(req, 'uri'),
  name: field(req, 'name'),
  scopes: field(req, 'scopes'),
  default_scopes: field(req, 'default_scopes'),
  access_token_ttl_seconds: field(req, 'access_token_ttl_seconds'),
});
type Form = ReturnType<typeof formOf>;
const NEW_FORM: Form = { uri: '', name: '', scopes: '', default_scopes: '', access_token_ttl_seconds: '' };

/** The form's fields in the admin API's wire names (the same schemas check them). */
const bodyOf = (req: Request) => ({
  uri: field(req, 'uri'),
  name: field(req, 'name'),
  scopes: scopesOf(field(req, 'scopes')),
  default_scopes: field(req, 'default_scopes').split(/\s+/).filter(Boolean),
  access_token_ttl_seconds: ttlOf(field(req, 'access_token_ttl_seconds')),
});

/**
 * A platform's RFC 8707 resources (s.admin.resources): the list and the form to add one; a
 * resource's page to edit and delete it. Standard platforms only: on a seed platform the screen
 * says why and offers no form (resources kept from a time it was standard can still be deleted).
 */
export function consoleResourcesRouter(s: Services): Router {
  const r = Router();
  const base = (req: Request) => `/admin/platforms/${req.params.platformId}/resources`;
  const platformId = (req: Request) => String(req.params.platformId);
  const isStandard = (res: Response) => res.locals.consolePlatform?.signingProfile === 'standard';
  /** The :resourceId of the path, checked like the API's (a UUID; else 400). */
  const resourceId = (req: Request) =>
    parseInput(ResourceParams, { platform_guid: platformId(req), resource_id: String(req.params.resourceId) })
      .resource_id;

  async function showList(
    req: Request,
    res: Response,
    form: Form = NEW_FORM,
    error: string | null = null,
    status = 200,
  ) {
    const resources = (await s.admin.resources.list(operatorActor(req, res), platformId(req))).map(presentResource);
    renderConsole(
      req,
      res,
      'resources',
      {
        title: 'Resources',
        resources,
        isStandard: isStandard(res),
        form,
        action: base(req),
        ttlMin: RESOURCE_TOKEN_TTL_MIN,
        ttlMax: RESOURCE_TOKEN_TTL_MAX,
        error,
      },
      status,
    );
  }

  async function showResource(
    req: Request,
    res: Response,
    form: Form | null = null,
    error: string | null = null,
    status = 200,
  ) {
    const resource = presentResource(
      await s.admin.resources.get(operatorActor(req, res), platformId(req), resourceId(req)),
    );
    renderConsole(
      req,
      res,
      'resource',
      {
        title: resource.name,
        resource,
        isStandard: isStandard(res),
        form: form ?? {
          uri: resource.uri,
          name: resource.name,
          scopes: scopeLines(resource.scopes),
          default_scopes: resource.default_scopes.join(' '),
          access_token_ttl_seconds:
            resource.access_token_ttl_seconds === null ? '' : String(resource.access_token_ttl_seconds),
        },
        listUrl: base(req),
        action: `${base(req)}/${resource.id}`,
        ttlMin: RESOURCE_TOKEN_TTL_MIN,
        ttlMax: RESOURCE_TOKEN_TTL_MAX,
        error,
      },
      status,
    );
  }

  r.get('/admin/platforms/:platformId/resources', (req, res) => showList(req, res));

  r.post('/admin/platforms/:platformId/resources', (req, res) =>
    submitForm(
      req,
      res,
      async () => {
        const created = await s.admin.resources.create(
          operatorActor(req, res),
          platformId(req),
          parseInput(ResourceCreate, bodyOf(req)),
        );
        return { message: `Resource "${created.name}" added.`, to: `${base(req)}/${created.id}` };
      },
      (error, status) => showList(req, res, formOf(req), error, status),
    ),
  );

  r.get('/admin/platforms/:platformId/resources/:resourceId', (req, res) => showResource(req, res));

  r.post('/admin/platforms/:platformId/resources/:resourceId', (req, res) =>
    submitForm(
      req,
      res,
      async () => {
        const updated = await s.admin.resources.update(
          operatorActor(req, res),
          platformId(req),
          resourceId(req),
          parseInput(ResourceUpdate, bodyOf(req)),
        );
        return { message: 'Changes saved.', to: `${base(req)}/${updated.id}` };
      },
      (error, status) => showResource(req, res, formOf(req), error, status),
    ),
  );

  r.post('/admin/platforms/:platformId/resources/:resourceId/delete', (req, res) =>
    submitForm(
      req,
      res,
      async () => {
        const actor = operatorActor(req, res);
        const current = await s.admin.resources.get(actor, platformId(req), resourceId(req));
        if (field(req, 'confirm') !== 'yes') throw invalidRequest('tick "I understand" to delete the resource');
        await s.admin.resources.delete(actor, platformId(req), current.id);
        return { message: `Resource "${current.name}" deleted.`, to: base(req) };
      },
      (error, status) => showResource(req, res, null, error, status),
    ),
  );

  return r;
}
