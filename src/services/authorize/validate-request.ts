import { z } from 'zod';
import { OAuthError, invalidRequest, invalidTarget } from '../../errors';
import { isAccessTokenJwt } from '../../crypto/jwt';
import { idTokenHintClaims } from '../id-token-hint';
import { newId } from '../../crypto/random';
import { isUuid } from '../../domain/ids';
import * as clients from '../../repositories/client.repository';
import { wireClientId, type Client } from '../../domain/client';
import type { Platform } from '../../domain/platform';
import type { AuditContext } from '../../domain/audit';
import { checkEmail } from '../user-rules';
import type { Deps } from '../deps';
import { scopesOfRequest } from './request-scopes';
import type { SigningKeys } from '../signing-keys.service';
import type { Platforms } from '../platforms.service';
import { matchRedirectUri } from '../redirect-uris';
import type { AuthorizationRequest } from '../../domain/authorization-request';
import { RESOURCES_PER_REQUEST_MAX, resourceUriProblem, type Resource } from '../../domain/resource';
import type { Resources } from '../resources.service';
import type { ClientMetadataDocuments } from '../client-metadata-documents.service';
import { CLIENT_ID_URL_MAX_LENGTH, namesMetadataDocument } from '../../domain/client-metadata-document';

const str = (max: number) => z.string().max(max, `must be at most ${max} characters`).optional();

const AuthorizeParams = z.object({
  response_type: str(64),
  client_id: str(CLIENT_ID_URL_MAX_LENGTH),
  redirect_uri: str(2048),
  scope: str(1024),
  state: str(1024),
  nonce: str(512),
  code_challenge: str(128),
  code_challenge_method: str(16),
  login_hint: str(320),
  id_token_hint: str(8192),
  action: str(16),
  prompt: str(64),
  max_age: str(12),
  acr_values: str(512),
  ui_locales: str(256),
  first_name: str(100),
  last_name: str(100),
  phone_number: str(32),
  response_mode: str(16),
  request: str(8192),
  request_uri: str(2048),
});
export type AuthorizeParams = z.infer<typeof AuthorizeParams>;

const CHALLENGE = /^[A-Za-z0-9_-]{43}$/;
const PROMPTS = ['none', 'login', 'consent', 'select_account'];

/** OAuth 2.0 §4.1.2.1: until client and redirect_uri are known good, errors go to a page, never a redirect. */
export function createRequestValidation(
  deps: Deps,
  keys: SigningKeys,
  platforms: Platforms,
  resources: Resources,
  metadataDocuments: ClientMetadataDocuments,
) {
  /** The error page's way back to a known app: its registered home page (never the unverified redirect_uri). */
  const appOf = (client: Client) => (client.clientUri ? { name: client.name, url: client.clientUri } : undefined);

  /** A document that cannot be used is invalid_client with its reason, on the error page with 400 like the rest here (not the token endpoint's 401). */
  async function documentClient(platform: Platform, clientId: string, ctx?: AuditContext): Promise<Client> {
    try {
      return await metadataDocuments.storedClient(platform, clientId, ctx);
    } catch (err) {
      if (err instanceof OAuthError && err.code === 'invalid_client')
        throw new OAuthError('invalid_client', err.description, { status: 400, cause: err });
      throw err;
    }
  }

  /** `ctx`: who asked, for the audit event of a metadata document that cannot be fetched or used. */
  async function resolveClient(platform: Platform, raw: Record<string, string>, ctx?: AuditContext): Promise<Client> {
    const clientId = raw.client_id;
    if (!clientId)
      throw new OAuthError('invalid_request', 'The request has no client_id.', {
        pageMessage: 'errors:page.incomplete',
      });
    const client = isUuid(clientId)
      ? await clients.findById(deps.db, platform.id, clientId)
      : namesMetadataDocument(platform, clientId)
        ? await documentClient(platform, clientId, ctx)
        : undefined;
    if (!client)
      throw new OAuthError(
        'invalid_request',
        'The application that sent you here is not registered with this sign-in service.',
        { pageMessage: 'errors:page.unknownApp' },
      );
    if (!raw.redirect_uri)
      throw new OAuthError('invalid_request', 'The request has no redirect_uri.', {
        pageMessage: 'errors:page.incomplete',
        app: appOf(client),
      });
    // Exact match, except any port on a loopback IP literal (RFC 9700 §4.1.3, RFC 8252 §7.3)
    if (!matchRedirectUri(client.redirectUris, raw.redirect_uri)) {
      throw new OAuthError('invalid_request', 'The redirect_uri is not registered for this application.', {
        pageMessage: 'errors:page.badRedirectUri',
        app: appOf(client),
      });
    }
    return client;
  }

  /**
   * RFC 8707 §2: each `resource` an absolute URI without fragment and a resource of the platform,
   * else invalid_target. Standard platforms only: the caller passes none on a seed platform.
   */
  async function namedResources(platform: Platform, resource: string[]): Promise<Resource[]> {
    if (resource.length > RESOURCES_PER_REQUEST_MAX)
      throw invalidRequest(`at most ${RESOURCES_PER_REQUEST_MAX} "resource" parameters`);
    const named: Resource[] = [];
    for (const uri of new Set(resource)) {
      const problem = resourceUriProblem(uri);
      if (problem) throw invalidTarget(`resource "${uri.slice(0, 200)}" ${problem}`);
      const found = await resources.findByUri(platform.id, uri);
      if (!found) throw invalidTarget(`resource "${uri}" is not a resource of this platform`);
      named.push(found);
    }
    return named;
  }

  /** Everything after the redirect target is trusted; throws OAuthErrors that are redirected. `resource`: RFC 8707 indicators (standard platforms). */
  async function validate(
    platform: Platform,
    client: Client,
    raw: Record<string, string>,
    resource: string[] = [],
  ): Promise<AuthorizationRequest> {
    const parsed = AuthorizeParams.safeParse(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw invalidRequest(`invalid parameter "${issue.path.join('.')}": ${issue.message}`);
    }
    const p = parsed.data;
    if (p.request !== undefined)
      throw new OAuthError('request_not_supported', 'The request parameter is not supported');
    if (p.request_uri !== undefined)
      throw new OAuthError('request_uri_not_supported', 'The request_uri parameter is not supported');
    if (!p.response_type) throw invalidRequest('missing required parameter "response_type"');
    if (p.response_type !== 'code')
      throw new OAuthError('unsupported_response_type', 'Only response_type=code is supported');
    if (p.response_mode !== undefined && p.response_mode !== 'query')
      throw invalidRequest('Only response_mode=query is supported');
    const named = await namedResources(platform, resource);
    const { scopes, resources: resourceGrants } = scopesOfRequest(platform, client, p.scope, named);

    if (p.code_challenge !== undefined) {
      if (p.code_challenge_method !== 'S256') throw invalidRequest('code_challenge_method must be S256');
      if (!CHALLENGE.test(p.code_challenge))
        throw invalidRequest('code_challenge must be a base64url SHA-256 (43 characters)');
    } else if (p.code_challenge_method !== undefined) {
      throw invalidRequest('code_challenge_method sent without code_challenge');
    } else if (client.type === 'public') {
      throw invalidRequest('Public clients must use PKCE: send code_challenge with code_challenge_method=S256');
    }

    const prompts = p.prompt === undefined ? [] : [...new Set(p.prompt.split(' ').filter(Boolean))];
    const unknownPrompt = prompts.find((x) => !PROMPTS.includes(x));
    if (unknownPrompt) throw invalidRequest(`Unsupported prompt value "${unknownPrompt}"`);
    if (prompts.includes('none') && prompts.length > 1)
      throw invalidRequest('prompt=none cannot be combined with other values');

    let maxAge: number | undefined;
    if (p.max_age !== undefined) {
      if (!/^\d{1,9}$/.test(p.max_age)) throw invalidRequest('max_age must be a non-negative integer');
      maxAge = Number(p.max_age);
    }
    if (p.action !== undefined && p.action !== 'login' && p.action !== 'register')
      throw invalidRequest('action must be login or register');
    let loginHint: string | undefined;
    if (p.login_hint !== undefined && p.login_hint.trim() !== '') {
      if (checkEmail(p.login_hint)) throw invalidRequest('login_hint must be an email address');
      loginHint = p.login_hint.trim();
    }
    const idTokenHintSub =
      p.id_token_hint === undefined ? undefined : await subjectOfIdTokenHint(platform, client, p.id_token_hint);

    return {
      id: newId(),
      platformId: platform.id,
      clientId: client.id,
      clientName: client.name,
      redirectUri: matchRedirectUri(client.redirectUris, raw.redirect_uri)!, // the requested URI: the code is bound to it
      state: p.state,
      nonce: p.nonce,
      scopes,
      ...(resourceGrants.length ? { resources: resourceGrants } : {}),
      codeChallenge: p.code_challenge,
      prompts: maxAge === 0 && !prompts.includes('login') ? [...prompts, 'login'] : prompts, // max_age=0 behaves as prompt=login
      maxAge,
      acrValues: p.acr_values?.trim() || undefined,
      uiLocales: p.ui_locales?.trim() || undefined,
      loginHint,
      idTokenHintSub,
      action: p.action as AuthorizationRequest['action'],
      prefill: { givenName: p.first_name, familyName: p.last_name, phoneNumber: p.phone_number },
      createdAt: Math.floor(deps.now().getTime() / 1000),
    };
  }

  /** An ID token we issued to this client (expired is fine: OIDC Core 3.1.2.1); else invalid_request. */
  async function subjectOfIdTokenHint(platform: Platform, client: Client, hint: string): Promise<string> {
    const claims = await idTokenHintClaims(deps, keys, platforms, platform, client, hint);
    if (
      !claims ||
      !isUuid(claims.sub) ||
      (claims.aud !== wireClientId(client) && !(Array.isArray(claims.aud) && claims.aud.includes(wireClientId(client))))
    ) {
      throw invalidRequest('id_token_hint is not a valid ID token issued to this client');
    }
    // A public client's access token is signed with the same platform key: refuse it by its kind.
    if (isAccessTokenJwt(hint, claims)) throw invalidRequest('id_token_hint is not an ID token');
    return claims.sub;
  }

  return { resolveClient, validate, namedResources };
}
