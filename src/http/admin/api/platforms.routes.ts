import type { Router } from 'express';
import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import type { Services } from '../../../services';
import { PageQuery, PlatformParams } from '../../../wire/admin/common.schemas';
import {
  Platform,
  PlatformCreate,
  PlatformCreated,
  PlatformPage,
  PlatformUpdate,
  RateLimitParams,
  RateLimits,
  RateLimitSet,
} from '../../../wire/admin/platforms.schemas';
import { presentPlatform, presentRateLimits } from '../../../presenters/admin/platform.presenter';
import { addOperation } from './admin-route';
import { LOGO_CONTENT_TYPES, LOGO_MAX_BYTES } from '../../../domain/branding';

/** Platforms and their rate-limit overrides. */
export function platformRoutes(router: Router, registry: OpenAPIRegistry, s: Services) {
  const tag = 'Platforms';
  addOperation(router, registry, {
    method: 'get',
    path: '/platforms',
    operationId: 'listPlatforms',
    tag,
    summary: 'List platforms (a platform token sees its own)',
    query: PageQuery,
    status: 200,
    response: PlatformPage,
    responseDescription: 'A page of platforms, oldest first',
    handler: async ({ query, actor }) => {
      const page = await s.admin.platforms.list(actor, query);
      return { items: page.items.map(presentPlatform), next_cursor: page.nextCursor };
    },
  });
  addOperation(router, registry, {
    method: 'post',
    path: '/platforms',
    operationId: 'createPlatform',
    tag,
    summary: 'Create a platform with its first signing key',
    body: PlatformCreate,
    status: 201,
    response: PlatformCreated,
    responseDescription: 'The new platform',
    errors: [403],
    handler: async ({ body, actor }) => {
      const { platform, kid } = await s.admin.platforms.create(actor, body);
      return { ...presentPlatform(platform), kid };
    },
  });
  addOperation(router, registry, {
    method: 'get',
    path: '/platforms/:platform_guid',
    operationId: 'getPlatform',
    tag,
    summary: 'One platform',
    params: PlatformParams,
    status: 200,
    response: Platform,
    responseDescription: 'The platform',
    errors: [404],
    handler: async ({ params, actor }) => presentPlatform(await s.admin.platforms.get(actor, params.platform_guid)),
  });
  addOperation(router, registry, {
    method: 'patch',
    path: '/platforms/:platform_guid',
    operationId: 'updatePlatform',
    tag,
    summary: 'Rename a platform, set its second-factor policy, signing profile or branding',
    description:
      'Branding: logo_url (https), accent_color (#rrggbb, at least 4.5:1 against white), support_email; null or "" clears a field. Upload a logo with PUT /platforms/{platform_guid}/logo.',
    params: PlatformParams,
    body: PlatformUpdate,
    status: 200,
    response: Platform,
    responseDescription: 'The platform as changed',
    errors: [404],
    handler: async ({ params, body, actor }) =>
      presentPlatform(await s.admin.platforms.update(actor, params.platform_guid, body)),
  });
  addOperation(router, registry, {
    method: 'put',
    path: '/platforms/:platform_guid/logo',
    operationId: 'uploadPlatformLogo',
    tag,
    summary: "Upload the platform's logo (the body is the image)",
    description: `The image as the body with its Content-Type: ${LOGO_CONTENT_TYPES.join(', ')}; at most ${LOGO_MAX_BYTES} bytes. The type is checked against the content (signature; an SVG must parse as an <svg> document). The pages show it at uploaded_logo_path (instead of logo_url); a new upload gets a new logo_version and so a new URL.`,
    params: PlatformParams,
    upload: { contentTypes: LOGO_CONTENT_TYPES, maxBytes: LOGO_MAX_BYTES, description: 'The image file' },
    status: 200,
    response: Platform,
    responseDescription: 'The platform with its new logo_version',
    errors: [404],
    handler: async ({ params, upload, actor }) =>
      presentPlatform(await s.admin.platforms.setLogo(actor, params.platform_guid, upload.bytes, upload.contentType)),
  });
  addOperation(router, registry, {
    method: 'delete',
    path: '/platforms/:platform_guid/logo',
    operationId: 'removePlatformLogo',
    tag,
    summary: 'Remove the uploaded logo (the pages fall back to logo_url, else the initial)',
    params: PlatformParams,
    status: 200,
    response: Platform,
    responseDescription: 'The platform without an uploaded logo',
    errors: [404],
    handler: async ({ params, actor }) =>
      presentPlatform(await s.admin.platforms.removeLogo(actor, params.platform_guid)),
  });
  addOperation(router, registry, {
    method: 'get',
    path: '/platforms/:platform_guid/rate-limits',
    operationId: 'getRateLimits',
    tag,
    summary: "The platform's rate limits: defaults, overrides, in force",
    params: PlatformParams,
    status: 200,
    response: RateLimits,
    responseDescription: 'Every limited endpoint',
    errors: [404],
    handler: async ({ params, actor }) => presentRateLimits(await s.admin.platforms.get(actor, params.platform_guid)),
  });
  addOperation(router, registry, {
    method: 'put',
    path: '/platforms/:platform_guid/rate-limits/:endpoint',
    operationId: 'setRateLimit',
    tag,
    summary: "Override one endpoint's limit (requests per minute)",
    params: RateLimitParams,
    body: RateLimitSet,
    status: 200,
    response: RateLimits,
    responseDescription: 'The limits after the change',
    errors: [404],
    handler: async ({ params, body, actor }) =>
      presentRateLimits(
        await s.admin.platforms.setRateLimit(actor, params.platform_guid, params.endpoint, body.per_minute),
      ),
  });
  addOperation(router, registry, {
    method: 'delete',
    path: '/platforms/:platform_guid/rate-limits/:endpoint',
    operationId: 'resetRateLimit',
    tag,
    summary: "Back to the spec's limit for one endpoint",
    params: RateLimitParams,
    status: 200,
    response: RateLimits,
    responseDescription: 'The limits after the change',
    errors: [404],
    handler: async ({ params, actor }) =>
      presentRateLimits(await s.admin.platforms.setRateLimit(actor, params.platform_guid, params.endpoint, null)),
  });
}
