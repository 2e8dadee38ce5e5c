import type { Router } from 'express';
import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import type { Services } from '../../../services';
import { PageQuery, PlatformParams } from '../../../wire/admin/common.schemas';
import {
  RegistrationToken,
  RegistrationTokenCreate,
  RegistrationTokenCreated,
  RegistrationTokenPage,
  RegistrationTokenParams,
} from '../../../wire/admin/registration-tokens.schemas';
import { presentRegistrationToken } from '../../../presenters/admin/registration-token.presenter';
import { addOperation } from './admin-route';

/** A standard platform's initial access tokens (RFC 7591 §3): list, create (shown once), revoke. */
export function registrationTokenRoutes(router: Router, registry: OpenAPIRegistry, s: Services) {
  const tag = 'Registration tokens';
  const base = '/platforms/:platform_guid/registration-tokens';
  addOperation(router, registry, {
    method: 'get',
    path: base,
    operationId: 'listRegistrationTokens',
    tag,
    summary: "The platform's registration tokens, newest first (never the tokens)",
    params: PlatformParams,
    query: PageQuery,
    status: 200,
    response: RegistrationTokenPage,
    responseDescription: 'A page of registration tokens',
    errors: [404],
    handler: async ({ params, query, actor }) => {
      const page = await s.admin.registrationTokens.list(actor, params.platform_guid, query);
      return { items: page.items.map(presentRegistrationToken), next_cursor: page.nextCursor };
    },
  });
  addOperation(router, registry, {
    method: 'post',
    path: base,
    operationId: 'createRegistrationToken',
    tag,
    summary: 'An initial access token for dynamic client registration, shown once',
    description:
      'For a standard platform whose registration policy is `token`: the software presents it as `Authorization: Bearer TOKEN` on POST {issuer}/oauth/register. Only its SHA-256 digest is kept. 409 on a seed platform.',
    params: PlatformParams,
    body: RegistrationTokenCreate,
    bodyOptional: true,
    status: 201,
    response: RegistrationTokenCreated,
    responseDescription: 'The token, with the secret this once',
    errors: [404, 409],
    handler: async ({ params, body, actor }) => {
      const { registrationToken, token } = await s.admin.registrationTokens.create(actor, params.platform_guid, body);
      return { ...presentRegistrationToken(registrationToken), token };
    },
  });
  addOperation(router, registry, {
    method: 'post',
    path: `${base}/:token_id/revoke`,
    operationId: 'revokeRegistrationToken',
    tag,
    summary: 'Revoke a registration token: it registers nothing from now',
    description: 'Clients it registered stay. Revoking a revoked token changes nothing.',
    params: RegistrationTokenParams,
    status: 200,
    response: RegistrationToken,
    responseDescription: 'The token, revoked',
    errors: [404],
    handler: async ({ params, actor }) =>
      presentRegistrationToken(await s.admin.registrationTokens.revoke(actor, params.platform_guid, params.token_id)),
  });
}
