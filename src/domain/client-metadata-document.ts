import { DEFAULT_GRANT_TYPES, type Client } from './client';
import type { Platform } from './platform';
import { redirectUriProblem } from './redirect-uri';
import { SUPPORTED_SCOPES } from './scopes';

/**
 * Client ID Metadata Documents (draft-ietf-oauth-client-id-metadata-document), the pure rules: an
 * https URL as `client_id` names a JSON document of RFC 7591 client metadata that the client
 * publishes itself. What such an identifier may look like, which hosts a platform accepts, and
 * what a fetched document must hold to become a public client (docs/decisions.md, "Agent-ready
 * authorization").
 */

/** A platform's policy: `off`, `on` (any https URL), or host patterns separated by spaces (`*.example.com app.example.org`). */
export type ClientMetadataDocumentPolicy = string;

/** What a document yields: the client's identity, redirects, scopes and display fields, never a secret. */
export type MetadataDocumentClient = Pick<
  Client,
  | 'id'
  | 'name'
  | 'type'
  | 'redirectUris'
  | 'postLogoutRedirectUris'
  | 'allowedScopes'
  | 'grantTypes'
  | 'logoUri'
  | 'clientUri'
  | 'policyUri'
  | 'tosUri'
>;

export const CLIENT_ID_URL_MAX_LENGTH = 2000;
export const CLIENT_NAME_MAX_LENGTH = 100;
const URI_MAX_LENGTH = 2000;
const REDIRECT_URIS_MAX = 20;
const LIST_MAX = 10;
const SCOPES_MAX = 50;
const SCOPE_TOKEN_MAX_LENGTH = 128;
const HOST_PATTERNS_MAX = 50;

/** RFC 3986's characters: anything else (spaces, backslashes, quotes, non-ASCII) is not written in a URL as sent. */
const URI_CHARACTERS = /^[A-Za-z0-9\-._~:/?#[\]@!$&'()*+,;=%]+$/;

/**
 * Why `id` is not a client identifier URL, or undefined when it is: https, no userinfo, a path
 * other than `/`, no single- or double-dot segment (also percent-encoded), no fragment (the
 * draft's §3). It must be written as the URL parser writes it (lower-case host, no default port,
 * percent-encoding as is): the string we fetch, compare with the document's `client_id` and show
 * the user is then one string with one host.
 */
export function clientIdUrlProblem(id: string): string | undefined {
  if (id.length > CLIENT_ID_URL_MAX_LENGTH) return `is longer than ${CLIENT_ID_URL_MAX_LENGTH} characters`;
  if (!URI_CHARACTERS.test(id)) return 'holds characters a URL does not carry as they are';
  if (!id.startsWith('https://')) return 'is not an https URL';
  let url: URL;
  try {
    url = new URL(id);
  } catch {
    return 'is not a URL';
  }
  if (url.username || url.password || url.host === '' || id.slice(8).split(/[/?#]/)[0].includes('@'))
    return 'must not carry a user name or password';
  if (id.includes('#')) return 'must not have a fragment';
  const rawPath = id.slice(8 + url.host.length).split('?')[0];
  if (rawPath.split('/').some((segment) => /^(\.|%2e){1,2}$/i.test(segment)))
    return 'must not have "." or ".." path segments';
  if (url.pathname === '/' || url.pathname === '') return 'must have a path (not just "/")';
  if (url.href !== id) return `must be written in its normal form (${url.href})`;
  return undefined;
}

export const isClientIdUrl = (id: string): boolean => clientIdUrlProblem(id) === undefined;

/**
 * Whether a platform's policy lets a client identifier URL on `hostname` be fetched. `on`: any
 * host; `off` (or nothing): none; otherwise a list of patterns compared without case and without
 * a trailing dot, the port never part of it: `app.example.org` is that host only, and
 * `*.example.com` any host under example.com (any depth) but not example.com itself, as in a
 * certificate's wildcard: list both to allow both.
 */
export function hostAllowed(policy: ClientMetadataDocumentPolicy, hostname: string): boolean {
  const value = policy.trim().toLowerCase();
  if (value === 'on') return true;
  if (value === 'off' || value === '') return false;
  const host = hostname.toLowerCase().replace(/\.$/, '');
  return value.split(/\s+/).some((raw) => {
    const pattern = raw.replace(/\.$/, '');
    if (!pattern.startsWith('*.')) return host === pattern;
    const suffix = pattern.slice(1); // ".example.com"
    return host.length > suffix.length && host.endsWith(suffix);
  });
}

/**
 * Whether a platform looks `clientId` up as a Client ID Metadata Document: a standard platform
 * whose policy allows the URL's host. Otherwise a URL is as unknown a client_id as any other.
 */
export function namesMetadataDocument(
  platform: Pick<Platform, 'signingProfile' | 'clientMetadataDocuments'>,
  clientId: string,
): boolean {
  return (
    platform.signingProfile === 'standard' &&
    isClientIdUrl(clientId) &&
    hostAllowed(platform.clientMetadataDocuments, new URL(clientId).hostname)
  );
}

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/** Why a policy value cannot be stored, or undefined: `off`, `on`, or 1 to 50 host names or `*.` wildcards over at least two labels. */
export function clientMetadataDocumentPolicyProblem(policy: string): string | undefined {
  const value = policy.trim().toLowerCase();
  if (value === 'on' || value === 'off') return undefined;
  const patterns = value.split(/\s+/).filter(Boolean);
  if (patterns.length === 0) return 'must be "off", "on" or a list of host patterns';
  if (patterns.includes('on') || patterns.includes('off'))
    return '"on" and "off" stand alone, never among host patterns';
  if (patterns.length > HOST_PATTERNS_MAX) return `lists more than ${HOST_PATTERNS_MAX} host patterns`;
  for (const pattern of patterns) {
    const wildcard = pattern.startsWith('*.');
    const labels = (wildcard ? pattern.slice(2) : pattern).split('.');
    if (pattern.length > 253 || !labels.every((l) => LABEL.test(l)) || (wildcard && labels.length < 2)) {
      return `"${pattern}" is not a host name or a *.domain pattern (over at least two labels, such as *.example.com)`;
    }
  }
  return undefined;
}

export type ParsedMetadataDocument = { ok: true; client: MetadataDocumentClient } | { ok: false; reason: string };

/** A value from the document in a reason: JSON, at most 80 characters (never the whole document). */
const quote = (value: unknown): string => {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
};

class Refusal extends Error {}
const refuse = (reason: string): never => {
  throw new Refusal(reason);
};

function stringList(doc: Record<string, unknown>, field: string, max: number): string[] | undefined {
  const value = doc[field];
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || !value.every((v) => typeof v === 'string'))
    return refuse(`${field} must be an array of strings`);
  if (value.length > max) return refuse(`${field} lists more than ${max} entries`);
  return [...new Set(value as string[])];
}

function optionalString(doc: Record<string, unknown>, field: string): string | undefined {
  const value = doc[field];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') return refuse(`${field} must be a string`);
  return value;
}

function redirectUris(doc: Record<string, unknown>, field: string): string[] | undefined {
  const uris = stringList(doc, field, REDIRECT_URIS_MAX);
  for (const uri of uris ?? []) {
    if (uri.length > URI_MAX_LENGTH) refuse(`${field}: an entry is longer than ${URI_MAX_LENGTH} characters`);
    const problem = redirectUriProblem(uri);
    if (problem !== undefined) refuse(`${field}: ${problem}`);
  }
  return uris;
}

/** An https page or image of the client's (RFC 7591 §2), shown or linked on consent: never another scheme. */
function httpsUri(doc: Record<string, unknown>, field: string): string | null {
  const value = optionalString(doc, field);
  if (value === undefined) return null;
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  if (!url || url.protocol !== 'https:' || url.username || url.password || value.length > URI_MAX_LENGTH) {
    refuse(
      `${field} must be an https URL without credentials, at most ${URI_MAX_LENGTH} characters (got ${quote(value)})`,
    );
  }
  return value;
}

const isHiddenCharacter = (ch: string): boolean => {
  const c = ch.codePointAt(0)!;
  return (
    c < 0x20 ||
    (c >= 0x7f && c <= 0x9f) ||
    c === 0x200e ||
    c === 0x200f ||
    (c >= 0x202a && c <= 0x202e) ||
    (c >= 0x2066 && c <= 0x2069)
  );
};

function clientName(doc: Record<string, unknown>, url: URL): string {
  const value = optionalString(doc, 'client_name');
  if (value === undefined) return url.hostname;
  const name = value.trim();
  if (!name) refuse('client_name must not be empty');
  if (name.length > CLIENT_NAME_MAX_LENGTH) refuse(`client_name is longer than ${CLIENT_NAME_MAX_LENGTH} characters`);
  // Control and bidirectional-override characters would let a name display as something else.
  if ([...name].some(isHiddenCharacter)) refuse('client_name holds control or direction characters');
  return name;
}

/** RFC 6749 §3.3 scope tokens; without `scope`, the OpenID Connect scopes. offline_access only with the refresh_token grant. */
function allowedScopes(doc: Record<string, unknown>, grantTypes: string[]): string[] {
  const value = optionalString(doc, 'scope');
  const tokens =
    value === undefined
      ? SUPPORTED_SCOPES.filter((s) => s !== 'offline_access' || grantTypes.includes('refresh_token'))
      : [...new Set(value.split(' ').filter(Boolean))];
  if (tokens.length > SCOPES_MAX) refuse(`scope lists more than ${SCOPES_MAX} scopes`);
  const bad = tokens.find((t) => t.length > SCOPE_TOKEN_MAX_LENGTH || !/^[\x21\x23-\x5b\x5d-\x7e]+$/.test(t));
  if (bad !== undefined) refuse(`scope holds an invalid scope token ${quote(bad)}`);
  return tokens.filter((s) => s !== 'offline_access' || grantTypes.includes('refresh_token'));
}

/** Private members of a JWK (RFC 7517, RFC 7518 §6): a document publishes public keys only (the draft's §4.1). */
const PRIVATE_JWK_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'];

function checkJwks(doc: Record<string, unknown>): void {
  if (doc.jwks === undefined) return;
  const keys = (doc.jwks as { keys?: unknown } | null)?.keys;
  if (typeof doc.jwks !== 'object' || doc.jwks === null || !Array.isArray(keys))
    refuse('jwks must be an object with a keys array');
  if ((keys as unknown[]).some((k) => typeof k === 'object' && k !== null && PRIVATE_JWK_MEMBERS.some((m) => m in k)))
    refuse('jwks holds private key material');
}

/**
 * A fetched document (parsed JSON) as a public client, or the reason it is refused: `client_id`
 * equal to the URL it was fetched from, exactly (the draft's §4); no client secret and no
 * authentication method but `none` (§4.1; `private_key_jwt` is not supported yet, and an absent
 * method means `none`, since RFC 7591's default `client_secret_basic` cannot apply); only the
 * authorization_code and refresh_token grants and the `code` response type; 1 to 20 redirect URIs
 * under the same rules as a registered client's (https, or http on a loopback IP literal; no
 * fragment); bounded strings and lists. Other members are ignored.
 */
export function parseClientMetadataDocument(url: string, body: unknown): ParsedMetadataDocument {
  try {
    if (typeof body !== 'object' || body === null || Array.isArray(body)) refuse('the document is not a JSON object');
    const doc = body as Record<string, unknown>;
    if (doc.client_id === undefined) refuse('the document has no client_id');
    if (doc.client_id !== url) refuse(`client_id ${quote(doc.client_id)} is not the URL the document was fetched from`);
    for (const field of ['client_secret', 'client_secret_expires_at']) {
      if (field in doc) refuse(`${field} must not appear: a client metadata document has no shared secret`);
    }
    const method = optionalString(doc, 'token_endpoint_auth_method') ?? 'none';
    if (method !== 'none')
      refuse(`token_endpoint_auth_method ${quote(method)} is not supported: only "none" (a public client using PKCE)`);
    checkJwks(doc);
    const grantTypes = stringList(doc, 'grant_types', LIST_MAX) ?? ['authorization_code'];
    const badGrant = grantTypes.find((g) => g !== 'authorization_code' && g !== 'refresh_token');
    if (badGrant !== undefined)
      refuse(`grant_types: ${quote(badGrant)} is not supported (only authorization_code and refresh_token)`);
    if (!grantTypes.includes('authorization_code')) refuse('grant_types must include authorization_code');
    const badResponse = (stringList(doc, 'response_types', LIST_MAX) ?? ['code']).find((r) => r !== 'code');
    if (badResponse !== undefined) refuse(`response_types: ${quote(badResponse)} is not supported (only code)`);
    const redirects = redirectUris(doc, 'redirect_uris');
    if (!redirects || redirects.length === 0) refuse('redirect_uris must list at least one redirect URI');
    const parsedUrl = new URL(url);
    return {
      ok: true,
      client: {
        id: url,
        name: clientName(doc, parsedUrl),
        type: 'public',
        redirectUris: redirects!,
        postLogoutRedirectUris: redirectUris(doc, 'post_logout_redirect_uris') ?? [],
        allowedScopes: allowedScopes(doc, grantTypes),
        grantTypes: DEFAULT_GRANT_TYPES.filter((g) => grantTypes.includes(g)),
        clientUri: httpsUri(doc, 'client_uri'),
        logoUri: httpsUri(doc, 'logo_uri'),
        policyUri: httpsUri(doc, 'policy_uri'),
        tosUri: httpsUri(doc, 'tos_uri'),
      },
    };
  } catch (err) {
    if (err instanceof Refusal) return { ok: false, reason: err.message };
    throw err;
  }
}

/** The client a platform sees: a document's fields with a public client's defaults (no secret, no logout URIs, the default ID-token algorithm). */
export function metadataDocumentClientOf(platformId: string, doc: MetadataDocumentClient, fetchedAt: Date): Client {
  return {
    ...doc,
    platformId,
    sealedSecret: null,
    previousSealedSecret: null,
    previousSecretExpiresAt: null,
    isResourceServer: false,
    idTokenSignedResponseAlg: null,
    backchannelLogoutUri: null,
    backchannelLogoutSessionRequired: false,
    frontchannelLogoutUri: null,
    frontchannelLogoutSessionRequired: false,
    registrationSource: 'metadata_document',
    metadataDocumentUrl: doc.id,
    registration: null,
    jwks: null,
    jwksUri: null,
    tokenExchangeResources: [],
    lastUsedAt: null,
    createdAt: fetchedAt,
  };
}
