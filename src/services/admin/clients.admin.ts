import type { z } from 'zod';
import type { AdminActor } from '../../domain/admin';
import type { Client } from '../../domain/client';
import { isUuid } from '../../domain/ids';
import { OAuthError } from '../../errors';
import { newClientSecret } from '../../crypto/random';
import * as clients from '../../repositories/client.repository';
import type { Deps } from '../deps';
import type { Audit } from '../audit.service';
import type { ClientAuth } from '../client-auth.service';
import { checkClientInput, type Platforms } from '../platforms.service';
import { checkSigningAndLogout } from '../client-registration';
import { decodeCursor, toPage } from './cursor';
import type { PlatformsAdmin } from './platforms.admin';
import type { ClientCreate, ClientSecretRotate, ClientUpdate } from '../../wire/admin/clients.schemas';
import { clearable } from '../../wire/admin/branding.schemas';
import * as resources from '../../repositories/resources.repository';
import type { Queryable } from '../../db';
import { checkClientGrants } from '../client-grants';
import { invalidRequest } from '../../errors';

const unknownClient = (id: string) => new OAuthError('not_found', `unknown client "${id}"`);

/**
 * A platform's clients as operators manage them (API, CLI). Secrets leave only at creation, at a
 * rotation and when an update makes a client confidential; every change is audited in its
 * transaction and drops the cached client (this instance at once, others by NOTIFY).
 */
export function createClientsAdmin(
  deps: Deps,
  base: Platforms,
  clientAuth: ClientAuth,
  platformsAdmin: PlatformsAdmin,
  audit: Audit,
) {
  /** The client of a platform the actor may see; else not_found. */
  async function get(actor: AdminActor, platformId: string, id: string): Promise<Client> {
    return (await withPlatform(actor, platformId, id)).client;
  }

  async function withPlatform(actor: AdminActor, platformId: string, id: string) {
    const platform = await platformsAdmin.get(actor, platformId);
    const client = isUuid(id) ? await clients.findById(deps.db, platformId, id) : undefined;
    if (!client) throw unknownClient(id);
    return { platform, client };
  }

  return {
    get,

    async list(actor: AdminActor, platformId: string, page: { limit: number; cursor?: string }) {
      await platformsAdmin.get(actor, platformId);
      const rows = await clients.listPage(deps.db, platformId, {
        after: decodeCursor(page.cursor),
        limit: page.limit + 1,
      });
      return toPage(rows, page.limit, (c) => ({ at: c.createdAt, id: c.id }));
    },

    async create(actor: AdminActor, platformId: string, input: z.infer<typeof ClientCreate>) {
      await platformsAdmin.get(actor, platformId);
      return deps.db.transaction(async (trx) => {
        await checkExchangeResources(trx, platformId, input.token_exchange_resources ?? []);
        const created = await base.createClient(platformId, toNewClient(input), trx);
        const metadata = metadataOf(input);
        // RFC 7591 metadata is not part of registration's rules (createClient): stored beside it, in the same transaction.
        if (Object.values(metadata).some((v) => v != null))
          created.client = await clients.update(trx, platformId, created.client.id, metadata);
        const c = created.client;
        await audit.record(trx, actor, {
          kind: 'client.created',
          platformId,
          clientId: c.id,
          details: {
            name: c.name,
            type: c.type,
            redirect_uris: c.redirectUris,
            post_logout_redirect_uris: c.postLogoutRedirectUris,
            scopes: c.allowedScopes.join(' '),
            is_resource_server: c.isResourceServer,
            ...signingAndLogoutDetails(c),
            ...metadataDetails(c),
            ...grantDetails(c),
          },
        });
        return created;
      });
    },

    /** The same rules as creation over the client as it would be; returns the new secret when it became confidential. */
    async update(
      actor: AdminActor,
      platformId: string,
      id: string,
      input: z.infer<typeof ClientUpdate>,
    ): Promise<{ client: Client; secret?: string }> {
      const { platform, client: before } = await withPlatform(actor, platformId, id);
      const checked = checkClientInput({
        name: input.name ?? before.name,
        type: input.type ?? before.type,
        redirectUris: input.redirect_uris ?? before.redirectUris,
        postLogoutRedirectUris: input.post_logout_redirect_uris ?? before.postLogoutRedirectUris,
        scopes: input.scopes ?? before.allowedScopes.join(' '),
        isResourceServer: input.is_resource_server ?? before.isResourceServer,
        grantTypes: input.grant_types ?? before.grantTypes,
      });
      // Only the fields given are checked: a stored value stays as it is (e.g. an algorithm kept after a switch to seed).
      const signingAndLogout = checkSigningAndLogout(
        {
          idTokenSignedResponseAlg: input.id_token_signed_response_alg,
          backchannelLogoutUri: input.backchannel_logout_uri,
          backchannelLogoutSessionRequired: input.backchannel_logout_session_required,
          frontchannelLogoutUri: input.frontchannel_logout_uri,
          frontchannelLogoutSessionRequired: input.frontchannel_logout_session_required,
        },
        {
          signingProfile: platform.signingProfile,
          type: checked.type,
          isProduction: deps.config.isProduction,
          currentAlg: before.idTokenSignedResponseAlg,
        },
      );
      const grants = checkClientGrants(
        {
          grantTypes: input.grant_types ?? before.grantTypes,
          jwks: input.jwks !== undefined ? input.jwks : before.jwks,
          jwksUri: input.jwks_uri !== undefined ? input.jwks_uri : before.jwksUri,
          tokenExchangeResources: input.token_exchange_resources ?? before.tokenExchangeResources,
        },
        {
          signingProfile: platform.signingProfile,
          type: checked.type,
          isProduction: deps.config.isProduction,
          idTokenAlg: signingAndLogout.idTokenSignedResponseAlg ?? before.idTokenSignedResponseAlg,
        },
      );
      // A confidential client proves itself with a secret or with keys, never both: the secret goes
      // when keys come (or the client turns public) and a new one is issued when they go.
      const hasKeys = (c: { jwks: unknown; jwksUri: unknown }) => Boolean(c.jwks || c.jwksUri);
      const needsSecret = checked.type === 'confidential' && !hasKeys(grants);
      const hadSecret = before.type === 'confidential' && !hasKeys(before) && before.sealedSecret !== null;
      const secret = needsSecret && !hadSecret ? newClientSecret() : undefined;
      const dropSecret = !needsSecret && before.sealedSecret !== null;
      const client = await deps.db.transaction(async (trx) => {
        if (input.token_exchange_resources)
          await checkExchangeResources(trx, platformId, grants.tokenExchangeResources);
        const updated = await clients.update(trx, platformId, id, {
          ...checked,
          ...signingAndLogout,
          ...metadataOf(input),
          ...grants,
          ...(secret ? { sealedSecret: deps.sealer.seal(secret) } : {}),
          ...(dropSecret ? { sealedSecret: null, previousSealedSecret: null, previousSecretExpiresAt: null } : {}),
        });
        await audit.record(trx, actor, {
          kind: 'client.updated',
          platformId,
          clientId: id,
          details: changes(before, updated),
        });
        return updated;
      });
      clientAuth.forget(id);
      return secret ? { client, secret } : { client };
    },

    /**
     * A new secret, shown once; the one it replaces keeps authenticating the client for
     * `overlap_seconds` (default CLIENT_SECRET_OVERLAP_SECONDS) so deployments can switch over.
     * ID tokens are signed with the new secret at once. An older overlap still running ends now.
     */
    async rotateSecret(actor: AdminActor, platformId: string, id: string, input: z.infer<typeof ClientSecretRotate>) {
      const before = await get(actor, platformId, id);
      if (before.type !== 'confidential')
        throw new OAuthError('invalid_request', 'a public client has no secret to rotate');
      if (!before.sealedSecret)
        throw new OAuthError('invalid_request', 'a client with keys (private_key_jwt) has no secret to rotate');
      const overlapSeconds = input.overlap_seconds ?? deps.config.clientSecretOverlapSeconds;
      const secret = newClientSecret();
      const expiresAt = new Date(deps.now().getTime() + overlapSeconds * 1000);
      const client = await deps.db.transaction(async (trx) => {
        const updated = await clients.update(trx, platformId, id, {
          sealedSecret: deps.sealer.seal(secret),
          previousSealedSecret: overlapSeconds > 0 ? before.sealedSecret : null,
          previousSecretExpiresAt: overlapSeconds > 0 ? expiresAt : null,
        });
        await audit.record(trx, actor, {
          kind: 'client.secret_rotated',
          platformId,
          clientId: id,
          details: {
            overlap_seconds: overlapSeconds,
            previous_secret_expires_at: overlapSeconds > 0 ? expiresAt.toISOString() : null,
          },
        });
        return updated;
      });
      clientAuth.forget(id);
      return { client, secret };
    },

    /** Removes the client with its codes, tokens, refresh-token families and consents, in one transaction. */
    async delete(actor: AdminActor, platformId: string, id: string): Promise<void> {
      const before = await get(actor, platformId, id);
      await deps.db.transaction(async (trx) => {
        const removed = await clients.deleteWithGrants(trx, platformId, id);
        await audit.record(trx, actor, {
          kind: 'client.deleted',
          platformId,
          clientId: id,
          details: {
            name: before.name,
            type: before.type,
            refresh_token_families: removed.refreshFamilies,
            consents: removed.consents,
            authorization_codes: removed.codes,
            device_authorizations: removed.deviceAuthorizations,
          },
        });
      });
      clientAuth.forget(id);
    },
  };
}

/** RFC 8693 policy names resources the platform has registered, so a typo cannot silently allow nothing. */
async function checkExchangeResources(db: Queryable, platformId: string, uris: string[]): Promise<void> {
  for (const uri of uris) {
    if (!(await resources.findByUri(db, platformId, uri)))
      throw invalidRequest(`token_exchange_resources: "${uri.slice(0, 200)}" is not a resource of this platform`);
  }
}

function toNewClient(input: z.infer<typeof ClientCreate>) {
  return {
    name: input.name,
    type: input.type,
    redirectUris: input.redirect_uris ?? [],
    postLogoutRedirectUris: input.post_logout_redirect_uris,
    scopes: input.scopes ?? '',
    grantTypes: input.grant_types,
    jwks: input.jwks,
    jwksUri: clearable(input.jwks_uri),
    tokenExchangeResources: input.token_exchange_resources,
    isResourceServer: input.is_resource_server,
    idTokenSignedResponseAlg: input.id_token_signed_response_alg,
    backchannelLogoutUri: input.backchannel_logout_uri,
    backchannelLogoutSessionRequired: input.backchannel_logout_session_required,
    frontchannelLogoutUri: input.frontchannel_logout_uri,
    frontchannelLogoutSessionRequired: input.frontchannel_logout_session_required,
  };
}

/** The ID-token algorithm and logout registration in wire names (URIs are not secrets). */
function signingAndLogoutDetails(c: Client) {
  return {
    id_token_signed_response_alg: c.idTokenSignedResponseAlg,
    backchannel_logout_uri: c.backchannelLogoutUri,
    backchannel_logout_session_required: c.backchannelLogoutSessionRequired,
    frontchannel_logout_uri: c.frontchannelLogoutUri,
    frontchannel_logout_session_required: c.frontchannelLogoutSessionRequired,
  };
}

/** RFC 7591 client metadata given, in stored form ('' → null: cleared; undefined: unchanged). */
function metadataOf(input: z.infer<typeof ClientUpdate>) {
  return {
    logoUri: clearable(input.logo_uri),
    clientUri: clearable(input.client_uri),
    policyUri: clearable(input.policy_uri),
    tosUri: clearable(input.tos_uri),
  };
}

/** The RFC 7591 metadata in wire names (URLs, not secrets). */
function metadataDetails(c: Client) {
  return { logo_uri: c.logoUri, client_uri: c.clientUri, policy_uri: c.policyUri, tos_uri: c.tosUri };
}

/** Grants and keys in wire names: public keys are no secret, but an audit line names them by kid, not in full. */
function grantDetails(c: Client) {
  return {
    grant_types: c.grantTypes,
    jwks_kids: c.jwks ? c.jwks.keys.map((k) => (typeof k.kid === 'string' ? k.kid : null)) : null,
    jwks_uri: c.jwksUri,
    token_exchange_resources: c.tokenExchangeResources,
  };
}

/** What an update changed, as `{field: {from, to}}` in wire names (URIs and scopes are not secrets). */
function changes(before: Client, after: Client) {
  const out: Record<string, { from: unknown; to: unknown }> = {};
  const pairs: Array<[string, unknown, unknown]> = [
    ['name', before.name, after.name],
    ['type', before.type, after.type],
    ['redirect_uris', before.redirectUris, after.redirectUris],
    ['post_logout_redirect_uris', before.postLogoutRedirectUris, after.postLogoutRedirectUris],
    ['scopes', before.allowedScopes.join(' '), after.allowedScopes.join(' ')],
    ['is_resource_server', before.isResourceServer, after.isResourceServer],
  ];
  const [from, to] = [
    { ...signingAndLogoutDetails(before), ...metadataDetails(before), ...grantDetails(before) },
    { ...signingAndLogoutDetails(after), ...metadataDetails(after), ...grantDetails(after) },
  ];
  for (const field of Object.keys(to) as Array<keyof typeof to>) pairs.push([field, from[field], to[field]]);
  for (const [field, from, to] of pairs) if (JSON.stringify(from) !== JSON.stringify(to)) out[field] = { from, to };
  return out;
}

export type ClientsAdmin = ReturnType<typeof createClientsAdmin>;
