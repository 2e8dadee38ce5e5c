import * as jose from 'jose';
import { OAuthError } from '../../errors';
import { digest } from '../../crypto/digest';
import {
  CLIENT_ASSERTION_ALGS,
  CLIENT_ASSERTION_CLOCK_SKEW_SECONDS,
  CLIENT_ASSERTION_MAX_LENGTH,
  assertionAudiences,
  assertionClaimsProblem,
  isClientAssertionAlg,
  keyFitsAlg,
  type ClientAssertionAlg,
  type Jwk,
} from '../../domain/client-assertion';
import { wireClientId, type Client } from '../../domain/client';
import type { AuditContext } from '../../domain/audit';
import type { Platform } from '../../domain/platform';
import * as assertions from '../../repositories/client-assertion.repository';
import type { Deps } from '../deps';
import type { ClientJwksSource } from './client-jwks';

/** An assertion as sent, its header and claims read but nothing verified yet. */
export interface DecodedAssertion {
  jws: string;
  header: jose.ProtectedHeaderParameters;
  claims: jose.JWTPayload;
}

type SignatureOutcome = 'verified' | 'unknown_kid' | 'no_fitting_key' | 'bad_signature';

const refused = (reason: string) => new OAuthError('invalid_client', `client_assertion: ${reason}`);

/** Reads an assertion's header and claims without trusting them. Throws invalid_client on anything but a compact JWS with a JSON claims set. */
export function decodeAssertion(jws: string): DecodedAssertion {
  if (jws.length > CLIENT_ASSERTION_MAX_LENGTH) throw refused(`longer than ${CLIENT_ASSERTION_MAX_LENGTH} characters`);
  try {
    // decodeJwt refuses five-part (encrypted) tokens and claims that are not a JSON object
    return { jws, claims: jose.decodeJwt(jws), header: jose.decodeProtectedHeader(jws) };
  } catch {
    throw refused('not a signed JWT (header.claims.signature, base64url, a JSON claims set)');
  }
}

/** Which of `keys` verifies the signature: those with the header's kid (all when it has none) that fit the alg, in turn. */
async function verifySignature(
  jws: string,
  alg: ClientAssertionAlg,
  kid: string | undefined,
  keys: Jwk[],
): Promise<SignatureOutcome> {
  const named = kid === undefined ? keys : keys.filter((k) => k.kid === kid);
  if (kid !== undefined && named.length === 0) return 'unknown_kid';
  const fitting = named.filter((k) => keyFitsAlg(k, alg));
  if (fitting.length === 0) return 'no_fitting_key';
  for (const jwk of fitting) {
    try {
      const key = await jose.importJWK(jwk as jose.JWK, alg);
      await jose.compactVerify(jws, key, { algorithms: [alg] });
      return 'verified';
    } catch {
      // a key that does not import (malformed, RSA under 2048 bits) or does not verify: try the next
    }
  }
  return 'bad_signature';
}

/**
 * Client authentication with private_key_jwt (RFC 7523 §2.2 and §3, OIDC Core §9): the assertion's
 * algorithm, claims, signature under one of the client's keys (src/services/client-assertion/client-jwks.ts),
 * then its jti spent once for all instances (src/repositories/client-assertion.repository.ts).
 */
export function createClientAssertions(deps: Deps, jwks: ClientJwksSource) {
  /** Throws invalid_client naming what is wrong; returns once the assertion proved the client and its jti is spent. */
  async function verify(
    platform: Pick<Platform, 'id' | 'signingProfile'>,
    client: Client,
    assertion: DecodedAssertion,
    ctx: AuditContext,
  ): Promise<void> {
    const { header, claims, jws } = assertion;
    if (!isClientAssertionAlg(header.alg))
      throw refused(
        `alg ${JSON.stringify(String(header.alg ?? '')).slice(0, 40)} is not accepted; sign with one of the client's keys (${CLIENT_ASSERTION_ALGS.join(', ')})`,
      );
    const nowSeconds = Math.floor(deps.now().getTime() / 1000);
    const problem = assertionClaimsProblem(claims, {
      clientId: wireClientId(client),
      audiences: assertionAudiences(deps.config.baseUrl, platform),
      nowSeconds,
    });
    if (problem) throw refused(problem);

    const kid = typeof header.kid === 'string' ? header.kid : undefined;
    let outcome = await verifySignature(jws, header.alg, kid, await jwks.keysOf(client, ctx));
    // A key the set does not know may be a rotation: the jwks_uri is asked again (at most once a minute).
    if (outcome === 'unknown_kid' || (kid === undefined && outcome !== 'verified')) {
      const fresh = await jwks.refresh(client, ctx);
      if (fresh) outcome = await verifySignature(jws, header.alg, kid, fresh);
    }
    const named = kid === undefined ? '' : ` with kid ${JSON.stringify(kid.slice(0, 64))}`;
    if (outcome === 'unknown_kid')
      throw refused(`none of the client's keys has kid ${JSON.stringify(kid!.slice(0, 64))}`);
    if (outcome === 'no_fitting_key') throw refused(`none of the client's keys${named} can verify ${header.alg}`);
    if (outcome === 'bad_signature')
      throw refused(`the signature does not verify with the client's key${named || 's'}`);

    // RFC 7523 §3 item 7: single use, for as long as the assertion could be accepted.
    const expiresAt = new Date(((claims.exp as number) + CLIENT_ASSERTION_CLOCK_SKEW_SECONDS) * 1000);
    if (!(await assertions.recordJti(deps.db, client.id, digest(claims.jti as string), expiresAt, deps.now())))
      throw refused('this jti was used already: an assertion is single-use');
  }

  return { verify, forget: jwks.forget };
}

export type ClientAssertions = ReturnType<typeof createClientAssertions>;
