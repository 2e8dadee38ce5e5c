import { invalidClientMetadata, invalidRedirectUri } from '../../errors';
import {
  APPLICATION_TYPES,
  REGISTRABLE_GRANT_TYPES,
  REGISTRATION_AUTH_METHODS,
  type ApplicationType,
  type ClientType,
  type DynamicRegistration,
  type RegistrationAuthMethod,
} from '../../domain/client';
import { parseScope, SUPPORTED_SCOPES } from '../../domain/scopes';
import type { Platform } from '../../domain/platform';
import { isLocalhostRedirectUri, isLoopbackIpRedirectUri } from '../redirect-uris';

/**
 * RFC 7591 §2 client metadata, checked for a registration (POST) or its replacement (RFC 7592 PUT).
 * Unknown fields are ignored (§2); a known field of the wrong type or value is invalid_client_metadata
 * naming it, a refused redirect URI invalid_redirect_uri (§3.2.2). Nothing is stored on a refusal.
 */
export interface CheckedClientMetadata {
  name: string;
  type: ClientType;
  redirectUris: string[];
  allowedScopes: string[];
  clientUri: string | null;
  logoUri: string | null;
  tosUri: string | null;
  policyUri: string | null;
  registration: DynamicRegistration;
}

const MAX_URI = 2000;
const MAX_TEXT = 200;
const MAX_REDIRECT_URIS = 20;
const MAX_CONTACTS = 10;

/**
 * The scopes a self-registered client may hold on this platform: today the platform's supported
 * OpenID scopes. A platform's resource scopes (RFC 8707) are to be added here.
 */
export function scopesOfferedToRegisteredClients(_platform: Pick<Platform, 'id'>): readonly string[] {
  return SUPPORTED_SCOPES;
}

/** Checks `body` (the parsed JSON) against the platform's policy; throws invalid_client_metadata / invalid_redirect_uri. */
export function checkClientMetadata(body: unknown, platform: Pick<Platform, 'id'>): CheckedClientMetadata {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw invalidClientMetadata('the body must be a JSON object of client metadata');
  const m = body as Record<string, unknown>;
  const applicationType = oneOf(m, 'application_type', APPLICATION_TYPES) ?? 'web';
  const grantTypes = listOf(
    m,
    'grant_types',
    REGISTRABLE_GRANT_TYPES,
    'only authorization_code and refresh_token are supported',
  ) ?? ['authorization_code'];
  if (!grantTypes.includes('authorization_code'))
    throw invalidClientMetadata(
      'grant_types: must include authorization_code (the only way this server issues tokens to a registered client)',
    );
  const responseTypes = listOf(m, 'response_types', ['code'] as const, 'only code is supported') ?? ['code'];
  if (!responseTypes.includes('code'))
    throw invalidClientMetadata('response_types: must be ["code"] with the authorization_code grant');
  // RFC 7591 §2: the default is client_secret_basic.
  const authMethod: RegistrationAuthMethod =
    oneOf(m, 'token_endpoint_auth_method', REGISTRATION_AUTH_METHODS) ?? 'client_secret_basic';
  const redirectUris = redirectUrisOf(m, applicationType, authMethod === 'none');
  const clientUri = httpsUri(m, 'client_uri');
  const name = text(m, 'client_name') ?? hostOf(clientUri ?? redirectUris[0]) ?? 'Unnamed app';
  return {
    name,
    type: authMethod === 'none' ? 'public' : 'confidential',
    redirectUris,
    allowedScopes: scopesOf(m, platform, grantTypes),
    clientUri,
    logoUri: httpsUri(m, 'logo_uri'),
    tosUri: httpsUri(m, 'tos_uri'),
    policyUri: httpsUri(m, 'policy_uri'),
    registration: {
      applicationType,
      tokenEndpointAuthMethod: authMethod,
      grantTypes: REGISTRABLE_GRANT_TYPES.filter((g) => grantTypes.includes(g)),
      responseTypes: ['code'],
      contacts: contactsOf(m),
      softwareId: text(m, 'software_id'),
      softwareVersion: text(m, 'software_version'),
    },
  };
}

/**
 * The requested scope narrowed to what the platform offers, openid always included: RFC 7591 §2
 * lets the server register fewer scopes than asked (the response says which), so an unknown scope
 * is dropped rather than refused; no scope means everything offered.
 */
/** The scopes registered; `offline_access` only with the refresh_token grant, so that grant_types hold without a check at the token endpoint. */
function scopesOf(m: Record<string, unknown>, platform: Pick<Platform, 'id'>, grantTypes: readonly string[]): string[] {
  const offered = scopesOfferedToRegisteredClients(platform).filter(
    (s) => s !== 'offline_access' || grantTypes.includes('refresh_token'),
  );
  if (m.scope === undefined) return [...offered];
  if (typeof m.scope !== 'string' || m.scope.length > 2000)
    throw invalidClientMetadata('scope: must be a string of space-separated scopes');
  const requested = new Set([...parseScope(m.scope), 'openid']);
  return offered.filter((s) => requested.has(s));
}

function redirectUrisOf(m: Record<string, unknown>, applicationType: ApplicationType, isPublic: boolean): string[] {
  const v = m.redirect_uris;
  if (v === undefined) throw invalidRedirectUri('redirect_uris: required for the authorization_code grant');
  if (!Array.isArray(v) || v.length === 0) throw invalidRedirectUri('redirect_uris: must be a non-empty array of URIs');
  if (v.length > MAX_REDIRECT_URIS) throw invalidRedirectUri(`redirect_uris: at most ${MAX_REDIRECT_URIS}`);
  for (const uri of v) checkRedirectUriFor(uri, applicationType, isPublic);
  return [...new Set(v as string[])];
}

/**
 * web: https. native (RFC 8252 §7): a loopback IP literal over http on any port (§7.3), a
 * private-use scheme in reverse-domain form such as `com.example.app:/cb` (§7.1), or https (§7.2).
 * A public client (no secret) may register a loopback redirect — the IP literal or `localhost`
 * by name, any port — whatever application_type it names: MCP clients and CLIs register
 * `http://localhost:PORT/callback` without naming themselves native (docs/decisions.md).
 */
function checkRedirectUriFor(uri: unknown, applicationType: ApplicationType, isPublic: boolean): void {
  if (typeof uri !== 'string' || uri.length === 0 || uri.length > MAX_URI)
    throw invalidRedirectUri(`redirect_uris: each must be a URI of at most ${MAX_URI} characters`);
  const shown = uri.slice(0, 100);
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    throw invalidRedirectUri(`redirect_uris: "${shown}" is not an absolute URI`);
  }
  if (uri.includes('#')) throw invalidRedirectUri(`redirect_uris: "${shown}" must not contain a fragment`);
  if (url.username || url.password) throw invalidRedirectUri(`redirect_uris: "${shown}" must not contain credentials`);
  if (url.protocol === 'https:') return;
  if (isPublic && (isLoopbackIpRedirectUri(uri) || isLocalhostRedirectUri(uri))) return;
  if (url.protocol === 'http:' && (url.hostname === 'localhost' || url.hostname.endsWith('.localhost'))) {
    throw invalidRedirectUri(
      `redirect_uris: "${shown}" uses localhost: only a public client (token_endpoint_auth_method none) may; a confidential one registers the loopback IP literal http://127.0.0.1/… or http://[::1]/… (RFC 8252 §7.3, §8.3)`,
    );
  }
  if (applicationType === 'web')
    throw invalidRedirectUri(`redirect_uris: "${shown}" must use https (application_type web)`);
  if (url.protocol === 'http:') {
    if (isLoopbackIpRedirectUri(uri)) return;
    throw invalidRedirectUri(
      `redirect_uris: "${shown}": a native app's http redirect must be the loopback IP literal http://127.0.0.1/… or http://[::1]/… (RFC 8252 §7.3)`,
    );
  }
  // RFC 8252 §7.1: a private-use scheme is a reverse domain name the app controls (so it contains a period).
  if (!/^[a-z][a-z0-9+-]*(\.[a-z0-9+-]+)+:$/.test(url.protocol)) {
    throw invalidRedirectUri(
      `redirect_uris: "${shown}": a native app's private-use scheme must be a reverse domain name such as com.example.app:/callback (RFC 8252 §7.1)`,
    );
  }
}

/** An optional https URL (client_uri, logo_uri, tos_uri, policy_uri): the consent page links or loads it. */
function httpsUri(m: Record<string, unknown>, field: string): string | null {
  const v = m[field];
  if (v === undefined || v === null) return null;
  if (typeof v !== 'string' || v.length > MAX_URI)
    throw invalidClientMetadata(`${field}: must be a URL of at most ${MAX_URI} characters`);
  let url: URL;
  try {
    url = new URL(v);
  } catch {
    throw invalidClientMetadata(`${field}: "${v.slice(0, 100)}" is not an absolute URL`);
  }
  if (url.protocol !== 'https:') throw invalidClientMetadata(`${field}: must be an https URL`);
  if (url.username || url.password) throw invalidClientMetadata(`${field}: must not contain credentials`);
  return v;
}

function text(m: Record<string, unknown>, field: string): string | null {
  const v = m[field];
  if (v === undefined || v === null) return null;
  if (typeof v !== 'string' || v.length > MAX_TEXT)
    throw invalidClientMetadata(`${field}: must be a string of at most ${MAX_TEXT} characters`);
  // Control characters have no place in a name shown on the consent page.
  const trimmed = v.trim();
  if ([...trimmed].some((ch) => ch.charCodeAt(0) < 0x20 || ch.charCodeAt(0) === 0x7f))
    throw invalidClientMetadata(`${field}: must not contain control characters`);
  return trimmed === '' ? null : trimmed;
}

function oneOf<T extends string>(m: Record<string, unknown>, field: string, allowed: readonly T[]): T | undefined {
  const v = m[field];
  if (v === undefined) return undefined;
  if (typeof v !== 'string' || !(allowed as readonly string[]).includes(v))
    throw invalidClientMetadata(`${field}: must be one of ${allowed.join(', ')}`);
  return v as T;
}

function listOf<T extends string>(
  m: Record<string, unknown>,
  field: string,
  allowed: readonly T[],
  why: string,
): T[] | undefined {
  const v = m[field];
  if (v === undefined) return undefined;
  if (!Array.isArray(v) || v.length === 0 || v.length > 10 || v.some((x) => typeof x !== 'string'))
    throw invalidClientMetadata(`${field}: must be a non-empty array of strings`);
  const unknown = (v as string[]).find((x) => !(allowed as readonly string[]).includes(x));
  if (unknown !== undefined)
    throw invalidClientMetadata(`${field}: "${unknown.slice(0, 100)}" is not supported (${why})`);
  return [...new Set(v as T[])];
}

function contactsOf(m: Record<string, unknown>): string[] {
  const v = m.contacts;
  if (v === undefined || v === null) return [];
  if (
    !Array.isArray(v) ||
    v.length > MAX_CONTACTS ||
    v.some((c) => typeof c !== 'string' || c.length === 0 || c.length > 254)
  ) {
    throw invalidClientMetadata(
      `contacts: must be an array of at most ${MAX_CONTACTS} strings (email addresses) of at most 254 characters`,
    );
  }
  return [...new Set(v as string[])];
}

const hostOf = (uri: string | undefined): string | undefined => {
  try {
    return uri ? new URL(uri).host || undefined : undefined;
  } catch {
    return undefined;
  }
};
