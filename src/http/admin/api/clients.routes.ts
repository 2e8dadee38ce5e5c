import type { Router } from 'express';
import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import type { Services } from '../../../services';
import { PageQuery, PlatformParams } from '../../../wire/admin/common.schemas';
import {
  Client,
  ClientCreate,
  ClientCreated,
  ClientPage,
  ClientParams,
  ClientSecretRotate,
  ClientSecretRotated,
  ClientUpdate,
  ClientUpdated,
} from '../../../wire/admin/clients.schemas';
import { presentClient } from '../../../presenters/admin/client.presenter';
import { addOperation } from './admin-route';

/** A platform's clients: registration, changes, secret rotation with an overlap, deletion. */
export function clientRoutes(router: Router, registry: OpenAPIRegistry, s: Services) {
  const tag = 'Clients';
  const base = '/platforms/:platform_guid/clients';
  addOperation(router, registry, {
    method: 'get',
    path: base,
    operationId: 'listClients',
    tag,
    summary: "List a platform's clients",
    params: PlatformParams,
    query: PageQuery,
    status: 200,
    response: ClientPage,
    responseDescription: 'A page of clients, oldest first',
    errors: [404],
    handler: async ({ params, query, actor }) => {
      const page = await s.admin.clients.list(actor, params.platform_guid, query);
      return { items: page.items.map(presentClient), next_cursor: page.nextCursor };
    },
  });
  addOperation(router, registry, {
    method: 'post',
    path: base,
    operationId: 'createClient',
    tag,
    summary: 'Register a client; a confidential one gets its secret, shown once',
    params: PlatformParams,
    body: ClientCreate,
    status: 201,
    response: ClientCreated,
    responseDescription: 'The new client (client_secret null when public)',
    errors: [404],
    handler: async ({ params, body, actor }) => {
      const { client, secret } = await s.admin.clients.create(actor, params.platform_guid, body);
      return { ...presentClient(client), client_secret: secret };
    },
  });
  addOperation(router, registry, {
    method: 'get',
    path: `${base}/:client_id`,
    operationId: 'getClient',
    tag,
    summary: 'One client (never its secret)',
    params: ClientParams,
    status: 200,
    response: Client,
    responseDescription: 'The client',
    errors: [404],
    handler: async ({ params, actor }) =>
      presentClient(await s.admin.clients.get(actor, params.platform_guid, params.client_id)),
  });
  addOperation(router, registry, {
    method: 'patch',
    path: `${base}/:client_id`,
    operationId: 'updateClient',
    tag,
    summary: 'Change a client: name, URIs (each list replaced), scopes, type, resource-server flag',
    description:
      'The rules of registration apply to the client as changed. public → confidential issues a secret, returned once in client_secret; confidential → public drops the secret.',
    params: ClientParams,
    body: ClientUpdate,
    status: 200,
    response: ClientUpdated,
    responseDescription: 'The client as changed',
    errors: [404],
    handler: async ({ params, body, actor }) => {
      const { client, secret } = await s.admin.clients.update(actor, params.platform_guid, params.client_id, body);
      return secret ? { ...presentClient(client), client_secret: secret } : presentClient(client);
    },
  });
  addOperation(router, registry, {
    method: 'post',
    path: `${base}/:client_id/rotate-secret`,
    operationId: 'rotateClientSecret',
    tag,
    summary: 'A new secret, shown once; the previous one works for overlap_seconds more',
    description:
      'ID tokens are signed with the new secret at once. overlap_seconds defaults to CLIENT_SECRET_OVERLAP_SECONDS; 0 ends the previous secret now. A public client has none (400).',
    params: ClientParams,
    body: ClientSecretRotate,
    status: 200,
    response: ClientSecretRotated,
    responseDescription: 'The client with its new secret',
    errors: [404],
    handler: async ({ params, body, actor }) => {
      const { client, secret } = await s.admin.clients.rotateSecret(
        actor,
        params.platform_guid,
        params.client_id,
        body,
      );
      return { ...presentClient(client), client_secret: secret };
    },
  });
  addOperation(router, registry, {
    method: 'delete',
    path: `${base}/:client_id`,
    operationId: 'deleteClient',
    tag,
    summary: 'Delete a client with its codes, tokens, refresh tokens and consents',
    params: ClientParams,
    status: 204,
    responseDescription: 'Deleted',
    errors: [404],
    handler: async ({ params, actor }) => {
      await s.admin.clients.delete(actor, params.platform_guid, params.client_id);
      return undefined;
    },
  });
}
