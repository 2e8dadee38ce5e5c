import type { Router } from 'express';
import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import type { Services } from '../../../services';
import { PageQuery, PlatformParams } from '../../../wire/admin/common.schemas';
import { KeyParams, KeyRotate, KeyRotated, SigningKey, SigningKeyPage } from '../../../wire/admin/keys.schemas';
import { presentKey, presentKeyRotated } from '../../../presenters/admin/key.presenter';
import { addOperation } from './admin-route';

/** A platform's signing keys: list, rotate, retire. */
export function keyRoutes(router: Router, registry: OpenAPIRegistry, s: Services) {
  const tag = 'Signing keys';
  addOperation(router, registry, {
    method: 'get',
    path: '/platforms/:platform_guid/keys',
    operationId: 'listKeys',
    tag,
    summary: "The platform's signing keys, newest first (never their material)",
    params: PlatformParams,
    query: PageQuery,
    status: 200,
    response: SigningKeyPage,
    responseDescription: 'A page of keys',
    errors: [404],
    handler: async ({ params, query, actor }) => {
      const page = await s.admin.keys.list(actor, params.platform_guid, query);
      return { items: page.items.map(presentKey), next_cursor: page.nextCursor };
    },
  });
  addOperation(router, registry, {
    method: 'post',
    path: '/platforms/:platform_guid/keys/rotate',
    operationId: 'rotateKey',
    tag,
    summary: 'A new signing key; the old one verifies its tokens until they expire',
    description:
      'The body names the algorithm (`{"alg": "ES256"}`); HS512 unless given, which signs at once. RS256, ES256 and EdDSA keys belong to standard platforms (409 on a seed platform): ' +
      'the new key is published in the JWKS at once and signs from `activates_at` (after SIGNING_KEY_PUBLICATION_SECONDS), so relying parties holding a cached JWKS already know it; ' +
      '`{"alg": "RS256", "immediately": true}` makes it sign at once (a compromised key). Rotating again while a key is next replaces that key.',
    params: PlatformParams,
    body: KeyRotate,
    bodyOptional: true,
    status: 201,
    response: KeyRotated,
    responseDescription: 'The new kid and the one it replaced',
    errors: [404, 409],
    handler: async ({ params, body, actor }) =>
      presentKeyRotated(
        params.platform_guid,
        await s.admin.keys.rotate(actor, params.platform_guid, body.alg, { immediately: body.immediately }),
      ),
  });
  addOperation(router, registry, {
    method: 'post',
    path: '/platforms/:platform_guid/keys/:kid/retire',
    operationId: 'retireKey',
    tag,
    summary: 'Retire a rotated-out key now: its tokens stop verifying and the JWKS drops it',
    description:
      'The active key cannot be retired (409): rotate first. Retiring a next key calls its rotation off (it never signed). Retiring a key that is already retired changes nothing.',
    params: KeyParams,
    status: 200,
    response: SigningKey,
    responseDescription: 'The key, retired',
    errors: [404, 409],
    handler: async ({ params, actor }) =>
      presentKey(await s.admin.keys.retire(actor, params.platform_guid, params.kid)),
  });
}
