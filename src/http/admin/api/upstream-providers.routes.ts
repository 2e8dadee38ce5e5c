import type { Router } from 'express';
import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import type { Services } from '../../../services';
import { PlatformParams } from '../../../wire/admin/common.schemas';
import { UserActionResult, UserParams } from '../../../wire/admin/users.schemas';
import {
  UpstreamProvider,
  UpstreamProviderCreate,
  UpstreamProviderParams,
  UpstreamProviders,
  UpstreamProviderUpdate,
  UserIdentities,
  UserIdentityParams,
} from '../../../wire/admin/upstream-providers.schemas';
import { presentUpstreamProvider, presentUserIdentity } from '../../../presenters/admin/upstream-provider.presenter';
import { addOperation } from './admin-route';

/** A platform's upstream identity providers: "Continue with …" on its sign-in and sign-up pages. */
export function upstreamProviderRoutes(router: Router, registry: OpenAPIRegistry, s: Services) {
  const tag = 'Upstream providers';
  const base = '/platforms/:platform_guid/upstream-providers';
  const present = (p: Parameters<typeof presentUpstreamProvider>[0]) =>
    presentUpstreamProvider(p, s.federation.providers.callbackUrl(p.platformId));
  const admin = s.admin.upstreamProviders;
  addOperation(router, registry, {
    method: 'get',
    path: base,
    operationId: 'listUpstreamProviders',
    tag,
    summary: "List a platform's upstream identity providers",
    params: PlatformParams,
    status: 200,
    response: UpstreamProviders,
    responseDescription: 'Every provider, in the order of the buttons (never a client secret)',
    errors: [404],
    handler: async ({ params, actor }) => ({ items: (await admin.list(actor, params.platform_guid)).map(present) }),
  });
  addOperation(router, registry, {
    method: 'post',
    path: base,
    operationId: 'createUpstreamProvider',
    tag,
    summary: 'Add an upstream provider: any OpenID Connect provider (oidc), or the google, microsoft or github preset',
    description:
      'A preset fills in the issuer, scopes, name and slug it knows; oidc needs issuer (its discovery is read at the first sign-in). ' +
      'client_secret is sealed and never returned (has_client_secret says whether one is set). ' +
      'Register callback_url as the redirect URI of the client at the upstream. 409 when the slug is taken on the platform.',
    params: PlatformParams,
    body: UpstreamProviderCreate,
    status: 201,
    response: UpstreamProvider,
    responseDescription: 'The new provider, with the callback URL to register',
    errors: [404, 409],
    handler: async ({ params, body, actor }) => present(await admin.create(actor, params.platform_guid, body)),
  });
  addOperation(router, registry, {
    method: 'get',
    path: `${base}/:provider_id`,
    operationId: 'getUpstreamProvider',
    tag,
    summary: 'One upstream provider, by id or slug (never its client secret)',
    params: UpstreamProviderParams,
    status: 200,
    response: UpstreamProvider,
    responseDescription: 'The provider',
    errors: [404],
    handler: async ({ params, actor }) => present(await admin.get(actor, params.platform_guid, params.provider_id)),
  });
  addOperation(router, registry, {
    method: 'patch',
    path: `${base}/:provider_id`,
    operationId: 'updateUpstreamProvider',
    tag,
    summary: 'Change an upstream provider: any field but its kind',
    description:
      'The provider as changed passes the rules of creation. client_secret: a new one replaces it, null removes it, absent keeps it. enabled: false hides its button without unlinking anyone.',
    params: UpstreamProviderParams,
    body: UpstreamProviderUpdate,
    status: 200,
    response: UpstreamProvider,
    responseDescription: 'The provider as changed',
    errors: [404, 409],
    handler: async ({ params, body, actor }) =>
      present(await admin.update(actor, params.platform_guid, params.provider_id, body)),
  });
  addOperation(router, registry, {
    method: 'delete',
    path: `${base}/:provider_id`,
    operationId: 'deleteUpstreamProvider',
    tag,
    summary: 'Remove an upstream provider and every identity linked through it',
    description:
      'Users linked through it keep their accounts but lose that way in: they sign in with a password or passkey, through another provider, or after a password reset. ' +
      'PATCH enabled: false hides the button and keeps the links. The audit event counts the identities unlinked.',
    params: UpstreamProviderParams,
    status: 204,
    responseDescription: 'Removed',
    errors: [404],
    handler: async ({ params, actor }) => {
      await admin.remove(actor, params.platform_guid, params.provider_id);
      return undefined;
    },
  });
}

/** A user's linked upstream identities: listed, and unlinked by an operator. */
export function userIdentityRoutes(router: Router, registry: OpenAPIRegistry, s: Services) {
  const tag = 'Users';
  const path = '/platforms/:platform_guid/users/:sub/identities';
  addOperation(router, registry, {
    method: 'get',
    path,
    operationId: 'listUserIdentities',
    tag,
    summary: 'The upstream accounts linked to the user (they sign in through them)',
    params: UserParams,
    status: 200,
    response: UserIdentities,
    responseDescription: 'Oldest link first',
    errors: [404],
    handler: async ({ params, actor }) => ({
      items: (await s.admin.identities.list(actor, params.platform_guid, params.sub)).map(presentUserIdentity),
    }),
  });
  addOperation(router, registry, {
    method: 'delete',
    path: `${path}/:identity_id`,
    operationId: 'unlinkUserIdentity',
    tag,
    summary: 'Unlink an upstream account from the user',
    description:
      'Unlike the account page, an operator may remove the last way in (a user without a password or passkey and no other link): ' +
      'the user then gets back in through a password reset mail (POST …/password-reset). Audited as identity.unlinked with the token as actor.',
    params: UserIdentityParams,
    status: 200,
    response: UserActionResult,
    responseDescription: 'Unlinked',
    errors: [404],
    handler: async ({ params, actor }) => {
      await s.admin.identities.unlink(actor, params.platform_guid, params.sub, params.identity_id);
      return { sub: params.sub, done: 'identity_unlinked' };
    },
  });
}
