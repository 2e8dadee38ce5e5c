import type { Router } from 'express';
import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import type { Services } from '../../../services';
import { PlatformParams } from '../../../wire/admin/common.schemas';
import {
  Resource,
  ResourceCreate,
  ResourceParams,
  Resources,
  ResourceUpdate,
} from '../../../wire/admin/resources.schemas';
import { presentResource } from '../../../presenters/admin/resource.presenter';
import { RESOURCE_SCOPES_MAX, RESOURCES_PER_PLATFORM_MAX } from '../../../domain/resource';
import { addOperation } from './admin-route';

/** A standard platform's RFC 8707 resources: the APIs and MCP servers its clients ask tokens for. */
export function resourceRoutes(router: Router, registry: OpenAPIRegistry, s: Services) {
  const tag = 'Resources';
  const base = '/platforms/:platform_guid/resources';
  const admin = s.admin.resources;
  addOperation(router, registry, {
    method: 'get',
    path: base,
    operationId: 'listResources',
    tag,
    summary: "List a platform's resources (RFC 8707 resource indicators)",
    params: PlatformParams,
    status: 200,
    response: Resources,
    responseDescription: 'Every resource, in the order they were added',
    errors: [404],
    handler: async ({ params, actor }) => ({
      items: (await admin.list(actor, params.platform_guid)).map(presentResource),
    }),
  });
  addOperation(router, registry, {
    method: 'post',
    path: base,
    operationId: 'createResource',
    tag,
    summary: 'Register a resource (an API, an MCP server) that clients name with `resource`',
    description:
      'Standard platforms only (409 on a seed platform). uri is the resource indicator (RFC 8707 §2: absolute, no fragment), unique on the platform (409 if taken). ' +
      'Scope names are RFC 6749 scope tokens other than the OpenID Connect scopes, unique; default_scopes are among them; access_token_ttl_seconds is within the documented bounds. ' +
      `A platform has at most ${RESOURCES_PER_PLATFORM_MAX} resources (409 beyond), a resource at most ${RESOURCE_SCOPES_MAX} scopes.`,
    params: PlatformParams,
    body: ResourceCreate,
    status: 201,
    response: Resource,
    responseDescription: 'The new resource',
    errors: [404, 409],
    handler: async ({ params, body, actor }) => presentResource(await admin.create(actor, params.platform_guid, body)),
  });
  addOperation(router, registry, {
    method: 'get',
    path: `${base}/:resource_id`,
    operationId: 'getResource',
    tag,
    summary: 'One resource',
    params: ResourceParams,
    status: 200,
    response: Resource,
    responseDescription: 'The resource',
    errors: [404],
    handler: async ({ params, actor }) =>
      presentResource(await admin.get(actor, params.platform_guid, params.resource_id)),
  });
  addOperation(router, registry, {
    method: 'patch',
    path: `${base}/:resource_id`,
    operationId: 'updateResource',
    tag,
    summary: 'Change a resource: any field',
    description:
      'The resource as changed passes the rules of creation (409 on a seed platform or a URI taken). scopes and default_scopes replace their lists.',
    params: ResourceParams,
    body: ResourceUpdate,
    status: 200,
    response: Resource,
    responseDescription: 'The resource as changed',
    errors: [404, 409],
    handler: async ({ params, body, actor }) =>
      presentResource(await admin.update(actor, params.platform_guid, params.resource_id, body)),
  });
  addOperation(router, registry, {
    method: 'delete',
    path: `${base}/:resource_id`,
    operationId: 'deleteResource',
    tag,
    summary: 'Remove a resource',
    description:
      'Requests naming it are refused from then on (invalid_target); access tokens already issued for it stay valid until they expire.',
    params: ResourceParams,
    status: 204,
    responseDescription: 'Removed',
    errors: [404],
    handler: async ({ params, actor }) => {
      await admin.delete(actor, params.platform_guid, params.resource_id);
      return undefined;
    },
  });
}
