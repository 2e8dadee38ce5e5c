import { Router, type Request, type Response } from 'express';
import type { Services } from '../../../services';
import type { HttpDeps } from '../../http-deps';
import { SUPPORTED_SCOPES } from '../../../domain/scopes';
import { GRANT_TYPES, ID_TOKEN_ALGS, DEFAULT_GRANT_TYPES } from '../../../domain/client';
import { invalidRequest } from '../../../errors';
import { parseInput } from '../../../services/admin/parse-input';
import { ClientCreate, ClientSecretRotate, ClientUpdate } from '../../../wire/admin/clients.schemas';
import { presentClient } from '../../../presenters/admin/client.presenter';
import { field, queryParam, submitForm } from './forms';
import { operatorActor } from './operator';
import { renderConsole } from './render';
import { saveConsoleSession } from './session';

const PAGE = 50;
/** The rotation's overlap choices (seconds): how long the previous secret keeps working. */
const OVERLAPS = [
  { seconds: 0, label: 'None: the old secret stops now' },
  { seconds: 3600, label: '1 hour' },
  { seconds: 86_400, label: '1 day' },
  { seconds: 604_800, label: '7 days' },
];

/** Every value of a repeated form field (checkboxes), trimmed, empties dropped. */
function fieldList(req: Request, name: string): string[] {
  const value = (req.body as Record<string, unknown> | undefined)?.[name];
  const list = Array.isArray(value) ? value : value === undefined ? [] : [value];
  return list
    .filter((v): v is string => typeof v === 'string')
    .map((v) => v.trim())
    .filter(Boolean);
}

/** A textarea's lines, trimmed, blank lines dropped. */
const lines = (text: string) =>
  text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter(Boolean);

/** Whether the form carries the field at all (the ID-token algorithm is on standard platforms' forms only). */
const hasField = (req: Request, name: string) =>
  (req.body as Record<string, unknown> | undefined)?.[name] !== undefined;

/** The grant checkboxes of a standard platform's client form. */
const GRANT_CHOICES = GRANT_TYPES.map((value) => ({
  value,
  label: {
    authorization_code: 'Authorization code (sign-in in a browser)',
    refresh_token: 'Refresh token',
    client_credentials: 'Client credentials (a service acting for itself)',
    'urn:ietf:params:oauth:grant-type:device_code': 'Device authorization (TVs, CLIs)',
    'urn:ietf:params:oauth:grant-type:token-exchange': 'Token exchange (acting for a user)',
  }[value],
}));

/** The JWK Set textarea: '' removes the keys; anything else must be JSON. */
function jwksField(req: Request): unknown {
  const text = field(req, 'jwks').trim();
  if (text === '') return null;
  try {
    return JSON.parse(text);
  } catch {
    throw invalidRequest('JWK Set: not JSON (give {"keys": [...]})');
  }
}

/** The grants-and-keys fields, on standard platforms' forms only (a seed form leaves them as they are). */
const grantsBody = (req: Request) =>
  hasField(req, 'grants_form')
    ? {
        grant_types: fieldList(req, 'grant_types'),
        token_exchange_resources: lines(field(req, 'token_exchange_resources')),
        jwks_uri: field(req, 'jwks_uri') || null,
        jwks: jwksField(req),
      }
    : {};

/** The client form as the admin API's body (the same schema, so the same messages). */
function clientBody(req: Request) {
  return {
    name: field(req, 'name'),
    redirect_uris: lines(field(req, 'redirect_uris')),
    post_logout_redirect_uris: lines(field(req, 'post_logout_redirect_uris')),
    scopes: fieldList(req, 'scopes').join(' '),
    is_resource_server: field(req, 'is_resource_server') === 'yes',
    // '' is "Default": null clears the algorithm; a form without the select leaves it as it is.
    ...(hasField(req, 'id_token_signed_response_alg')
      ? { id_token_signed_response_alg: field(req, 'id_token_signed_response_alg') || null }
      : {}),
    backchannel_logout_uri: field(req, 'backchannel_logout_uri') || null,
    backchannel_logout_session_required: field(req, 'backchannel_logout_session_required') === 'yes',
    frontchannel_logout_uri: field(req, 'frontchannel_logout_uri') || null,
    frontchannel_logout_session_required: field(req, 'frontchannel_logout_session_required') === 'yes',
    // RFC 7591 metadata: '' removes it.
    logo_uri: field(req, 'logo_uri'),
    client_uri: field(req, 'client_uri'),
    policy_uri: field(req, 'policy_uri'),
    tos_uri: field(req, 'tos_uri'),
    ...grantsBody(req),
  };
}

/** The form as typed, to show it again after a refusal. */
function formOf(req: Request) {
  return {
    name: field(req, 'name'),
    type: field(req, 'type'),
    redirect_uris: field(req, 'redirect_uris'),
    post_logout_redirect_uris: field(req, 'post_logout_redirect_uris'),
    scopes: fieldList(req, 'scopes'),
    is_resource_server: field(req, 'is_resource_server') === 'yes',
    id_token_signed_response_alg: field(req, 'id_token_signed_response_alg'),
    backchannel_logout_uri: field(req, 'backchannel_logout_uri'),
    backchannel_logout_session_required: field(req, 'backchannel_logout_session_required') === 'yes',
    frontchannel_logout_uri: field(req, 'frontchannel_logout_uri'),
    frontchannel_logout_session_required: field(req, 'frontchannel_logout_session_required') === 'yes',
    logo_uri: field(req, 'logo_uri'),
    client_uri: field(req, 'client_uri'),
    policy_uri: field(req, 'policy_uri'),
    tos_uri: field(req, 'tos_uri'),
    grant_types: fieldList(req, 'grant_types'),
    token_exchange_resources: field(req, 'token_exchange_resources'),
    jwks_uri: field(req, 'jwks_uri'),
    jwks: field(req, 'jwks'),
  };
}

/** The empty create form: the defaults of registration. */
const NEW_FORM = {
  name: '',
  type: 'confidential',
  redirect_uris: '',
  post_logout_redirect_uris: '',
  scopes: ['openid', 'profile', 'email'],
  is_resource_server: false,
  id_token_signed_response_alg: '',
  backchannel_logout_uri: '',
  backchannel_logout_session_required: false,
  frontchannel_logout_uri: '',
  frontchannel_logout_session_required: false,
  logo_uri: '',
  client_uri: '',
  policy_uri: '',
  tos_uri: '',
  grant_types: DEFAULT_GRANT_TYPES as string[],
  token_exchange_resources: '',
  jwks_uri: '',
  jwks: '',
};

/**
 * A platform's clients (s.admin.clients): list and create; a client's page to edit it, rotate its
 * secret and delete it. A secret leaves once: sealed in the console session across the 303, shown
 * on the next render of that client's page and dropped from the session by that render.
 */
export function consoleClientsRouter(s: Services, deps: HttpDeps): Router {
  const r = Router();
  const base = (req: Request) => `/admin/platforms/${req.params.platformId}/clients`;
  const platformId = (req: Request) => String(req.params.platformId);
  const clientId = (req: Request) => String(req.params.clientId);

  async function showList(
    req: Request,
    res: Response,
    form: ReturnType<typeof formOf> | null = null,
    error: string | null = null,
    status = 200,
  ) {
    const cursor = queryParam(req, 'cursor') || undefined;
    const page = await s.admin.clients.list(operatorActor(req, res), platformId(req), { limit: PAGE, cursor });
    const platform = await s.admin.platforms.get(operatorActor(req, res), platformId(req));
    renderConsole(
      req,
      res,
      'clients',
      {
        title: 'Clients',
        clients: page.items.map(presentClient),
        nextUrl: page.nextCursor ? `${base(req)}?cursor=${encodeURIComponent(page.nextCursor)}` : null,
        firstUrl: cursor ? base(req) : null,
        scopes: SUPPORTED_SCOPES,
        form: form ?? NEW_FORM,
        idTokenAlgs: platform.signingProfile === 'standard' ? ID_TOKEN_ALGS : null,
        grantTypes: platform.signingProfile === 'standard' ? GRANT_CHOICES : null,
        action: base(req),
        error,
      },
      status,
    );
  }

  async function showClient(
    req: Request,
    res: Response,
    form: ReturnType<typeof formOf> | null = null,
    error: string | null = null,
    status = 200,
  ) {
    const client = presentClient(await s.admin.clients.get(operatorActor(req, res), platformId(req), clientId(req)));
    const platform = await s.admin.platforms.get(operatorActor(req, res), platformId(req));
    const once = req.session.console?.secretOnce;
    let secret: string | null = null;
    if (once) {
      // Shown on this render only, whichever client it was for.
      delete req.session.console!.secretOnce;
      await saveConsoleSession(req);
      if (once.clientId === client.client_id) secret = s.admin.shownOnce.unseal(once.sealed);
    }
    renderConsole(
      req,
      res,
      'client',
      {
        title: client.name,
        client,
        secret,
        scopes: SUPPORTED_SCOPES,
        overlaps: OVERLAPS,
        defaultOverlap: deps.config.clientSecretOverlapSeconds,
        form: form ?? {
          name: client.name,
          type: client.type,
          redirect_uris: client.redirect_uris.join('\n'),
          post_logout_redirect_uris: client.post_logout_redirect_uris.join('\n'),
          scopes: client.scopes.split(' '),
          is_resource_server: client.is_resource_server,
          id_token_signed_response_alg: client.id_token_signed_response_alg ?? '',
          backchannel_logout_uri: client.backchannel_logout_uri ?? '',
          backchannel_logout_session_required: client.backchannel_logout_session_required,
          frontchannel_logout_uri: client.frontchannel_logout_uri ?? '',
          frontchannel_logout_session_required: client.frontchannel_logout_session_required,
          logo_uri: client.logo_uri ?? '',
          client_uri: client.client_uri ?? '',
          policy_uri: client.policy_uri ?? '',
          tos_uri: client.tos_uri ?? '',
          grant_types: client.grant_types,
          token_exchange_resources: client.token_exchange_resources.join('\n'),
          jwks_uri: client.jwks_uri ?? '',
          jwks: client.jwks ? JSON.stringify(client.jwks, null, 2) : '',
        },
        idTokenAlgs: platform.signingProfile === 'standard' ? ID_TOKEN_ALGS : null,
        grantTypes: platform.signingProfile === 'standard' ? GRANT_CHOICES : null,
        listUrl: base(req),
        action: `${base(req)}/${client.client_id}`,
        error,
      },
      status,
    );
  }

  /** Keeps a new secret, sealed, for the client page's next render. */
  function revealOnce(req: Request, id: string, secret: string) {
    req.session.console!.secretOnce = { clientId: id, sealed: s.admin.shownOnce.seal(secret) };
  }

  r.get('/admin/platforms/:platformId/clients', (req, res) => showList(req, res));

  r.post('/admin/platforms/:platformId/clients', (req, res) =>
    submitForm(
      req,
      res,
      async () => {
        const input = parseInput(ClientCreate, { ...clientBody(req), type: field(req, 'type') });
        const { client, secret } = await s.admin.clients.create(operatorActor(req, res), platformId(req), input);
        if (secret) revealOnce(req, client.id, secret);
        return { message: `Client "${client.name}" created.`, to: `${base(req)}/${client.id}` };
      },
      (error, status) => showList(req, res, formOf(req), error, status),
    ),
  );

  r.get('/admin/platforms/:platformId/clients/:clientId', (req, res) => showClient(req, res));

  r.post('/admin/platforms/:platformId/clients/:clientId', (req, res) =>
    submitForm(
      req,
      res,
      async () => {
        const input = parseInput(ClientUpdate, clientBody(req));
        const { client, secret } = await s.admin.clients.update(
          operatorActor(req, res),
          platformId(req),
          clientId(req),
          input,
        );
        if (secret) revealOnce(req, client.id, secret);
        return { message: 'Changes saved.', to: `${base(req)}/${client.id}` };
      },
      (error, status) => showClient(req, res, formOf(req), error, status),
    ),
  );

  r.post('/admin/platforms/:platformId/clients/:clientId/rotate-secret', (req, res) =>
    submitForm(
      req,
      res,
      async () => {
        const raw = field(req, 'overlap_seconds');
        const input = parseInput(ClientSecretRotate, raw === '' ? {} : { overlap_seconds: Number(raw) });
        const { client, secret } = await s.admin.clients.rotateSecret(
          operatorActor(req, res),
          platformId(req),
          clientId(req),
          input,
        );
        revealOnce(req, client.id, secret);
        const until = client.previousSecretExpiresAt
          ? ` The previous secret works until ${client.previousSecretExpiresAt.toISOString().slice(0, 16).replace('T', ' ')} UTC.`
          : ' The previous secret no longer works.';
        return { message: `New secret issued.${until}`, to: `${base(req)}/${client.id}` };
      },
      (error, status) => showClient(req, res, null, error, status),
    ),
  );

  r.post('/admin/platforms/:platformId/clients/:clientId/delete', (req, res) =>
    submitForm(
      req,
      res,
      async () => {
        const client = await s.admin.clients.get(operatorActor(req, res), platformId(req), clientId(req));
        if (field(req, 'confirm') !== 'yes') throw invalidRequest('tick "I understand" to delete the client');
        await s.admin.clients.delete(operatorActor(req, res), platformId(req), client.id);
        return { message: `Client "${client.name}" deleted, with its tokens and consents.`, to: base(req) };
      },
      (error, status) => showClient(req, res, null, error, status),
    ),
  );

  return r;
}
