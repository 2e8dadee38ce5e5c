import { OAuthError, invalidRequest } from '../errors';
import { JWT_BEARER_ASSERTION_TYPE } from '../domain/client-assertion';
import type { Platform } from '../domain/platform';
import { decodeAssertion, type DecodedAssertion } from './client-assertion/client-assertion.service';

/** What a request presents to authenticate its client, as the HTTP layer reads it. */
export interface ClientCredentials {
  authorization?: string;
  bodyClientId?: string;
  bodyClientSecret?: string;
  /** RFC 7521 §4.2 / RFC 7523 §2.2: private_key_jwt, on standard platforms. */
  bodyClientAssertionType?: string;
  bodyClientAssertion?: string;
}

export type AuthMethod = 'client_secret_basic' | 'client_secret_post' | 'none' | 'private_key_jwt';

/** The method a request uses and what it presents with it; the assertion decoded, not yet trusted. */
export interface Presented {
  id: string | undefined;
  method: AuthMethod;
  isBasic: boolean;
  secret?: string;
  assertion?: DecodedAssertion;
}

/** invalid_client; after Basic credentials with the challenge RFC 6749 §5.2 asks for. */
export const invalidClient = (basic: boolean, description = 'Client authentication failed') =>
  new OAuthError(
    'invalid_client',
    description,
    basic ? { headers: { 'WWW-Authenticate': 'Basic realm="latchkey"' } } : {},
  );

/** RFC 6749 §2.3.1: Basic credentials are form-urlencoded before base64. */
function parseBasicAuth(header: string): { id: string; secret: string } | undefined {
  const match = /^Basic ([A-Za-z0-9+/=._~-]+)$/i.exec(header.trim());
  if (!match) return undefined;
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return undefined;
  try {
    const form = (s: string) => decodeURIComponent(s.replace(/\+/g, ' '));
    return { id: form(decoded.slice(0, colon)), secret: form(decoded.slice(colon + 1)) };
  } catch {
    return undefined;
  }
}

/**
 * Whether the request carries a client assertion that counts: on a standard platform only. A seed
 * platform's interface is the spec's, which has no such parameters, so there they are ignored as before.
 */
export const carriesAssertion = (platform: Pick<Platform, 'signingProfile'>, creds: ClientCredentials): boolean =>
  platform.signingProfile === 'standard' &&
  (creds.bodyClientAssertion !== undefined || creds.bodyClientAssertionType !== undefined);

/** RFC 7523 §2.2: the jwt-bearer type and the JWT; RFC 7523 §3: its sub is the client, and client_id, if sent, the same. */
function assertionCredentials(creds: ClientCredentials): Presented {
  if (creds.bodyClientAssertionType !== JWT_BEARER_ASSERTION_TYPE)
    throw invalidClient(false, `client_assertion_type must be ${JWT_BEARER_ASSERTION_TYPE}`);
  if (!creds.bodyClientAssertion) throw invalidClient(false, 'client_assertion is missing');
  const assertion = decodeAssertion(creds.bodyClientAssertion);
  const sub = typeof assertion.claims.sub === 'string' ? assertion.claims.sub : undefined;
  if (creds.bodyClientId !== undefined && sub !== undefined && creds.bodyClientId !== sub)
    throw invalidClient(false, "client_id does not match the client_assertion's sub");
  return { id: creds.bodyClientId ?? sub, method: 'private_key_jwt', isBasic: false, assertion };
}

/**
 * Which method the request uses and what it presents: Basic, a body secret, an assertion
 * (standard platforms), or nothing. RFC 6749 §2.3: one method per request, else invalid_request.
 * Throws invalid_client for malformed credentials.
 */
export function presentedCredentials(platform: Pick<Platform, 'signingProfile'>, creds: ClientCredentials): Presented {
  const isBasic = typeof creds.authorization === 'string' && /^Basic /i.test(creds.authorization);
  const withAssertion = carriesAssertion(platform, creds);
  if (withAssertion && (isBasic || creds.bodyClientSecret !== undefined))
    throw invalidRequest('Send either a client secret or a client_assertion, not both');
  if (isBasic) {
    const basic = parseBasicAuth(creds.authorization!);
    if (!basic) throw invalidClient(true, 'Malformed Basic credentials');
    if (creds.bodyClientSecret !== undefined)
      throw invalidRequest('Client credentials sent both in the header and the body');
    if (creds.bodyClientId !== undefined && creds.bodyClientId !== basic.id)
      throw invalidRequest('client_id in the body does not match the Basic credentials');
    return { id: basic.id, secret: basic.secret, method: 'client_secret_basic', isBasic };
  }
  if (creds.bodyClientSecret !== undefined)
    return { id: creds.bodyClientId, secret: creds.bodyClientSecret, method: 'client_secret_post', isBasic };
  if (withAssertion) return assertionCredentials(creds);
  return { id: creds.bodyClientId, method: 'none', isBasic };
}
