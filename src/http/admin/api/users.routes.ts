import type { Router } from 'express';
import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import type { Services } from '../../../services';
import { PlatformParams } from '../../../wire/admin/common.schemas';
import {
  UserActionResult,
  UserConsentParams,
  UserConsents,
  UserCreate,
  UserDeleted,
  UserDetail,
  UserListQuery,
  UserPage,
  UserParams,
  UserSessionParams,
  UserSessions,
  UserUpdate,
} from '../../../wire/admin/users.schemas';
import {
  presentUser,
  presentUserConsent,
  presentUserDetail,
  presentUserSession,
} from '../../../presenters/admin/user.presenter';
import { addOperation } from './admin-route';

const USERS = '/platforms/:platform_guid/users';
const USER = `${USERS}/:sub`;

/** A platform's users: search, the account's life cycle, its sessions, consents and second factors. */
export function userRoutes(router: Router, registry: OpenAPIRegistry, s: Services) {
  const tag = 'Users';
  const users = s.admin.users;
  addOperation(router, registry, {
    method: 'get',
    path: USERS,
    operationId: 'listUsers',
    tag,
    summary: 'List or search users (?email= matches part of the address)',
    params: PlatformParams,
    query: UserListQuery,
    status: 200,
    response: UserPage,
    responseDescription: 'A page of users, oldest first',
    errors: [404],
    handler: async ({ params, query, actor }) => {
      const page = await users.list(actor, params.platform_guid, query);
      return { items: page.items.map(presentUser), next_cursor: page.nextCursor };
    },
  });
  addOperation(router, registry, {
    method: 'post',
    path: USERS,
    operationId: 'createUser',
    tag,
    summary: "Create a user (the sign-up's rules and messages)",
    params: PlatformParams,
    body: UserCreate,
    status: 201,
    response: UserDetail,
    responseDescription: 'The new user',
    errors: [404, 409],
    handler: async ({ params, body, actor }) =>
      presentUserDetail(await users.create(actor, params.platform_guid, body)),
  });
  addOperation(router, registry, {
    method: 'get',
    path: USER,
    operationId: 'getUser',
    tag,
    summary: 'One user: claims, verification, state, second factors enrolled',
    params: UserParams,
    status: 200,
    response: UserDetail,
    responseDescription: 'The user (never the password hash)',
    errors: [404],
    handler: async ({ params, actor }) => presentUserDetail(await users.get(actor, params.platform_guid, params.sub)),
  });
  addOperation(router, registry, {
    method: 'patch',
    path: USER,
    operationId: 'updateUser',
    tag,
    summary: "Change claims (the account page's rules); a new email is unverified unless email_verified is given",
    params: UserParams,
    body: UserUpdate,
    status: 200,
    response: UserDetail,
    responseDescription: 'The user as changed',
    errors: [404, 409],
    handler: async ({ params, body, actor }) =>
      presentUserDetail(await users.update(actor, params.platform_guid, params.sub, body)),
  });
  addOperation(router, registry, {
    method: 'delete',
    path: USER,
    operationId: 'deleteUser',
    tag,
    summary: 'Delete the user and everything they own (tokens, consents, second factors, picture, mails, throttles)',
    params: UserParams,
    status: 200,
    response: UserDeleted,
    responseDescription: 'What was deleted',
    errors: [404],
    handler: async ({ params, actor }) => users.remove(actor, params.platform_guid, params.sub),
  });
  addOperation(router, registry, {
    method: 'post',
    path: `${USER}/disable`,
    operationId: 'disableUser',
    tag,
    summary: 'Disable: no sign-in, browser sessions end, tokens revoked and refused',
    params: UserParams,
    status: 200,
    response: UserDetail,
    responseDescription: 'The user, disabled_at set',
    errors: [404],
    handler: async ({ params, actor }) =>
      presentUserDetail(await users.disable(actor, params.platform_guid, params.sub)),
  });
  addOperation(router, registry, {
    method: 'post',
    path: `${USER}/enable`,
    operationId: 'enableUser',
    tag,
    summary: 'Enable: the user may sign in again',
    params: UserParams,
    status: 200,
    response: UserDetail,
    responseDescription: 'The user, disabled_at null',
    errors: [404],
    handler: async ({ params, actor }) =>
      presentUserDetail(await users.enable(actor, params.platform_guid, params.sub)),
  });
  addOperation(router, registry, {
    method: 'post',
    path: `${USER}/unlock`,
    operationId: 'unlockUser',
    tag,
    summary: "Clear the sign-in and second-factor throttles of the user's email",
    params: UserParams,
    status: 200,
    response: UserActionResult,
    responseDescription: 'How many throttle keys were cleared',
    errors: [404],
    handler: async ({ params, actor }) => users.unlock(actor, params.platform_guid, params.sub),
  });
  addOperation(router, registry, {
    method: 'post',
    path: `${USER}/sign-out`,
    operationId: 'signOutUser',
    tag,
    summary: 'Sign out everywhere: every browser session and every refresh token',
    params: UserParams,
    status: 200,
    response: UserActionResult,
    responseDescription: 'How many refresh-token families were revoked',
    errors: [404],
    handler: async ({ params, actor }) => users.signOut(actor, params.platform_guid, params.sub),
  });
  addOperation(router, registry, {
    method: 'get',
    path: `${USER}/sessions`,
    operationId: 'listUserSessions',
    tag,
    summary: "The user's live app sessions (refresh-token families)",
    description:
      'A session is one live refresh-token family: an app the user signed in to with offline_access, kept signed in by refreshing. Browser sign-ins at the provider are cookies, not listed; POST sign-out ends them all.',
    params: UserParams,
    status: 200,
    response: UserSessions,
    responseDescription: 'Newest first',
    errors: [404],
    handler: async ({ params, actor }) => ({
      items: (await users.sessions(actor, params.platform_guid, params.sub)).map(presentUserSession),
    }),
  });
  addOperation(router, registry, {
    method: 'delete',
    path: `${USER}/sessions/:session_id`,
    operationId: 'revokeUserSession',
    tag,
    summary: 'Revoke one session: its refresh and access tokens',
    params: UserSessionParams,
    status: 200,
    response: UserActionResult,
    responseDescription: 'Revoked',
    errors: [404],
    handler: async ({ params, actor }) =>
      users.revokeSession(actor, params.platform_guid, params.sub, params.session_id),
  });
  addOperation(router, registry, {
    method: 'get',
    path: `${USER}/consents`,
    operationId: 'listUserConsents',
    tag,
    summary: 'Apps the user consented to, with the scopes',
    params: UserParams,
    status: 200,
    response: UserConsents,
    responseDescription: 'Most recent first',
    errors: [404],
    handler: async ({ params, actor }) => ({
      items: (await users.consents(actor, params.platform_guid, params.sub)).map(presentUserConsent),
    }),
  });
  addOperation(router, registry, {
    method: 'delete',
    path: `${USER}/consents/:client_id`,
    operationId: 'revokeUserConsent',
    tag,
    summary: "Revoke a consent and that app's tokens for the user",
    params: UserConsentParams,
    status: 200,
    response: UserActionResult,
    responseDescription: 'Revoked',
    errors: [404],
    handler: async ({ params, actor }) =>
      users.revokeConsent(actor, params.platform_guid, params.sub, params.client_id),
  });
  addOperation(router, registry, {
    method: 'post',
    path: `${USER}/reset-mfa`,
    operationId: 'resetUserMfa',
    tag,
    summary: 'Remove the authenticator app, recovery codes and passkeys (a lost device)',
    params: UserParams,
    status: 200,
    response: UserActionResult,
    responseDescription: 'What was removed',
    errors: [404],
    handler: async ({ params, actor }) => users.resetMfa(actor, params.platform_guid, params.sub),
  });
  addOperation(router, registry, {
    method: 'post',
    path: `${USER}/password-reset`,
    operationId: 'sendUserPasswordReset',
    tag,
    summary: 'Mail the user a password reset link (the operator never sees it)',
    params: UserParams,
    status: 200,
    response: UserActionResult,
    responseDescription: 'Queued in the mail outbox',
    errors: [404],
    handler: async ({ params, actor }) => users.sendPasswordReset(actor, params.platform_guid, params.sub),
  });
}
