import type { Router } from 'express';
import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import type { Services } from '../../../../services';
import { PageQuery, PlatformParams } from '../../../../services/admin/schemas/common.schemas';
import {
  Platform,
  PlatformCreate,
  PlatformCreated,
  PlatformPage,
  PlatformUpdate,
  RateLimitParams,
  RateLimits,
  RateLimitSet,
} from '../../../../services/admin/schemas/platforms.schemas';
import { presentPlatform, presentRateLimits } from '../../../../presenters/admin/platform.presenter';
import { addOperation } from '../../../admin-api/admin-route';

/** Platforms and their rate-limit overrides. */
export function platformRoutes(router: Router, registry: OpenAPIRegistry, s: Services) {
  const tag = 'Platforms';
  addOperation(router, registry, {
    method: 'get', path: '/platforms', operationId: 'listPlatforms', tag, summary: 'List platforms (a platform token sees its own)',
    query: PageQuery, status: 200, response: PlatformPage, responseDescription: 'A page of platforms, oldest first',
    handler: async ({ query, actor }) => {
      const page = await s.admin.platforms.list(actor, query);
      return { items: page.items.map(presentPlatform), next_cursor: page.nextCursor };
    },
  });
  addOperation(router, registry, {
    method: 'post', path: '/platforms', operationId: 'createPlatform', tag, summary: 'Create a platform with its first signing key',
    body: PlatformCreate, status: 201, response: PlatformCreated, responseDescription: 'The new platform', errors: [403],
    handler: async ({ body, actor }) => {
      const { platform, kid } = await s.admin.platforms.create(actor, body);
      return { ...presentPlatform(platform), kid };
    },
  });
  addOperation(router, registry, {
    method: 'get', path: '/platforms/:platform_guid', operationId: 'getPlatform', tag, summary: 'One platform',
    params: PlatformParams, status: 200, response: Platform, responseDescription: 'The platform', errors: [404],
    handler: async ({ params, actor }) => presentPlatform(await s.admin.platforms.get(actor, params.platform_guid)),
  });
  addOperation(router, registry, {
    method: 'patch', path: '/platforms/:platform_guid', operationId: 'updatePlatform', tag, summary: 'Rename a platform or set its second-factor policy',
    params: PlatformParams, body: PlatformUpdate, status: 200, response: Platform, responseDescription: 'The platform as changed', errors: [404],
    handler: async ({ params, body, actor }) => presentPlatform(await s.admin.platforms.update(actor, params.platform_guid, body)),
  });
  addOperation(router, registry, {
    method: 'get', path: '/platforms/:platform_guid/rate-limits', operationId: 'getRateLimits', tag, summary: "The platform's rate limits: defaults, overrides, in force",
    params: PlatformParams, status: 200, response: RateLimits, responseDescription: 'Every limited endpoint', errors: [404],
    handler: async ({ params, actor }) => presentRateLimits(await s.admin.platforms.get(actor, params.platform_guid)),
  });
  addOperation(router, registry, {
    method: 'put', path: '/platforms/:platform_guid/rate-limits/:endpoint', operationId: 'setRateLimit', tag, summary: "Override one endpoint's limit (requests per minute)",
    params: RateLimitParams, body: RateLimitSet, status: 200, response: RateLimits, responseDescription: 'The limits after the change', errors: [404],
    handler: async ({ params, body, actor }) => presentRateLimits(await s.admin.platforms.setRateLimit(actor, params.platform_guid, params.endpoint, body.per_minute)),
  });
  addOperation(router, registry, {
    method: 'delete', path: '/platforms/:platform_guid/rate-limits/:endpoint', operationId: 'resetRateLimit', tag, summary: "Back to the spec's limit for one endpoint",
    params: RateLimitParams, status: 200, response: RateLimits, responseDescription: 'The limits after the change', errors: [404],
    handler: async ({ params, actor }) => presentRateLimits(await s.admin.platforms.setRateLimit(actor, params.platform_guid, params.endpoint, null)),
  });
}
