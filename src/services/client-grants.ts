import { invalidRequest } from '../errors';
import {
  CONFIDENTIAL_ONLY_GRANTS,
  DEFAULT_GRANT_TYPES,
  GRANT_TYPES,
  TOKEN_EXCHANGE_GRANT,
  isGrantType,
  type ClientJwks,
  type ClientType,
  type GrantType,
} from '../domain/client';
import type { SigningProfile } from '../domain/platform';

/** A client's grants and keys as an operator gives them (undefined: the default, or unchanged on an update). */
export interface ClientGrantsInput {
  grantTypes?: string[];
  /** null or '': none. */
  jwks?: ClientJwks | null;
  jwksUri?: string | null;
  tokenExchangeResources?: string[];
}

export interface CheckedClientGrants {
  grantTypes: GrantType[];
  jwks: ClientJwks | null;
  jwksUri: string | null;
  tokenExchangeResources: string[];
}

const JWKS_MAX_KEYS = 20;
/** JWK members that belong to a private or symmetric key (RFC 7518 §6): never registered. */
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'];

/**
 * The grants a client may use and the keys it proves itself with, checked the same way at
 * creation and at an update (over the client as it would be). A seed platform's clients keep the
 * spec's two grants; client credentials and token exchange need a confidential client; keys
 * (inline or at an https URL, not both) need a confidential client and replace its secret; the
 * resources a client may exchange for need the token-exchange grant; HS512 ID tokens, keyed with
 * the secret, are refused with keys. Errors name the wire field.
 */
export function checkClientGrants(
  input: Omit<CheckedClientGrants, 'grantTypes'> & { grantTypes: string[] },
  ctx: { signingProfile: SigningProfile; type: ClientType; isProduction: boolean; idTokenAlg?: string | null },
): CheckedClientGrants {
  const unknown = input.grantTypes.find((g) => !isGrantType(g));
  if (unknown !== undefined)
    throw invalidRequest(
      `grant_types: "${String(unknown).slice(0, 80)}" is not a grant type (known: ${GRANT_TYPES.join(' ')})`,
    );
  if (input.grantTypes.length === 0) throw invalidRequest('grant_types: give at least one grant type');
  const grantTypes = GRANT_TYPES.filter((g) => input.grantTypes.includes(g));
  if (ctx.signingProfile === 'seed') {
    const beyond = grantTypes.find((g) => !DEFAULT_GRANT_TYPES.includes(g));
    if (beyond)
      throw invalidRequest(`grant_types: a seed platform's clients have only ${DEFAULT_GRANT_TYPES.join(' and ')}`);
  }
  const needsSecret = grantTypes.find((g) => CONFIDENTIAL_ONLY_GRANTS.includes(g));
  if (needsSecret && ctx.type !== 'confidential')
    throw invalidRequest(`grant_types: ${needsSecret} needs a confidential client (it acts without a person present)`);
  const jwks = input.jwks ?? null;
  const jwksUri = input.jwksUri?.trim() ? input.jwksUri.trim() : null;
  if (jwks && jwksUri) throw invalidRequest('give jwks or jwks_uri, not both');
  if ((jwks || jwksUri) && ctx.signingProfile === 'seed')
    throw invalidRequest(
      "jwks / jwks_uri: a seed platform's clients authenticate with their secret (the spec's interface)",
    );
  if ((jwks || jwksUri) && ctx.type !== 'confidential')
    throw invalidRequest('jwks / jwks_uri: only a confidential client authenticates with keys (private_key_jwt)');
  if ((jwks || jwksUri) && ctx.idTokenAlg === 'HS512')
    throw invalidRequest(
      'id_token_signed_response_alg: HS512 is keyed with the client secret; a client with keys has none',
    );
  if (jwks) checkJwks(jwks);
  if (jwksUri) checkJwksUri(jwksUri, ctx.isProduction);
  const tokenExchangeResources = [...new Set(input.tokenExchangeResources)];
  if (tokenExchangeResources.length && !grantTypes.includes(TOKEN_EXCHANGE_GRANT))
    throw invalidRequest(`token_exchange_resources: the client needs the ${TOKEN_EXCHANGE_GRANT} grant`);
  return { grantTypes, jwks, jwksUri, tokenExchangeResources };
}

function checkJwks(jwks: ClientJwks): void {
  if (typeof jwks !== 'object' || jwks === null || !Array.isArray(jwks.keys))
    throw invalidRequest('jwks: must be a JWK Set, {"keys": [...]}');
  if (jwks.keys.length === 0 || jwks.keys.length > JWKS_MAX_KEYS)
    throw invalidRequest(`jwks: give 1 to ${JWKS_MAX_KEYS} keys`);
  for (const key of jwks.keys) {
    if (typeof key !== 'object' || key === null || typeof key.kty !== 'string')
      throw invalidRequest('jwks: every key needs a "kty"');
    if (!['RSA', 'EC', 'OKP'].includes(key.kty))
      throw invalidRequest(`jwks: key type "${key.kty}" is not supported (RSA, EC, OKP)`);
    const secretPart = PRIVATE_MEMBERS.find((m) => m in key);
    if (secretPart)
      throw invalidRequest(`jwks: a key has the private member "${secretPart}": register public keys only`);
  }
}

function checkJwksUri(uri: string, isProduction: boolean): void {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    throw invalidRequest(`jwks_uri: "${uri.slice(0, 200)}" is not an absolute URL`);
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && !isProduction))
    throw invalidRequest('jwks_uri: must be an https URL (http only outside production)');
  if (url.hash) throw invalidRequest('jwks_uri: must not contain a fragment');
  if (uri.length > 2000) throw invalidRequest('jwks_uri: must be at most 2000 characters');
}
