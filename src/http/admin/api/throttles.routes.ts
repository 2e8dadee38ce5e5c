import type { Router } from 'express';
import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import type { Services } from '../../../services';
import { PlatformParams } from '../../../wire/admin/common.schemas';
import {
  ThrottleClearQuery,
  ThrottleList,
  ThrottleQuery,
  ThrottlesCleared,
} from '../../../wire/admin/throttles.schemas';
import { presentThrottle } from '../../../presenters/admin/throttle.presenter';
import { addOperation } from './admin-route';

/** A platform's sign-in and sign-up throttles: read them, clear them (unlock). */
export function throttleRoutes(router: Router, registry: OpenAPIRegistry, s: Services) {
  const tag = 'Sign-in throttles';
  addOperation(router, registry, {
    method: 'get',
    path: '/platforms/:platform_guid/throttles',
    operationId: 'listThrottles',
    tag,
    summary: 'Sign-in and sign-up throttles in force: failures, locks, time left (emails only hashed)',
    params: PlatformParams,
    query: ThrottleQuery,
    status: 200,
    response: ThrottleList,
    responseDescription: 'Every matching key',
    errors: [404],
    handler: async ({ params, query, actor }) => {
      const entries = await s.admin.throttles.list(actor, params.platform_guid, {
        email: query.email,
        source: query.source,
        lockedOnly: query.locked === 'true',
      });
      return { throttles: entries.map(presentThrottle) };
    },
  });
  addOperation(router, registry, {
    method: 'delete',
    path: '/platforms/:platform_guid/throttles',
    operationId: 'clearThrottles',
    tag,
    summary: 'Unlock: clear the throttles of an email, a source address, or all of the platform',
    params: PlatformParams,
    query: ThrottleClearQuery,
    status: 200,
    response: ThrottlesCleared,
    responseDescription: 'How many keys were cleared',
    errors: [404],
    handler: async ({ params, query, actor }) => ({
      platform_guid: params.platform_guid,
      cleared: await s.admin.throttles.clear(actor, params.platform_guid, { email: query.email, source: query.source }),
    }),
  });
}
