import { invalidRequest } from '../errors';
import type { ClientType, IdTokenAlg } from '../domain/client';
import type { SigningProfile } from '../domain/platform';

/**
 * A client's ID-token algorithm and logout registration (OIDC Registration §2, Back-Channel
 * Logout 1.0 §2.2, Front-Channel Logout 1.0 §2), checked the same way at creation and at an
 * admin update. Every error names the wire field.
 */
export interface ClientSigningAndLogoutInput {
  /** null: the platform's default (RS256 on standard platforms). */
  idTokenSignedResponseAlg?: IdTokenAlg | null;
  /** null or '': none. */
  backchannelLogoutUri?: string | null;
  backchannelLogoutSessionRequired?: boolean;
  frontchannelLogoutUri?: string | null;
  frontchannelLogoutSessionRequired?: boolean;
}

export interface ClientSigningAndLogoutContext {
  signingProfile: SigningProfile;
  /** The client's type as it is (creation) or will be (update). */
  type: ClientType;
  isProduction: boolean;
  /** On an update, the algorithm the client keeps when the input leaves it out. */
  currentAlg?: IdTokenAlg | null;
}

/** localhost, *.localhost, 127.0.0.0/8 and ::1: a relying party on the provider's own host, reached over plain http. */
function isLoopbackHost(hostname: string): boolean {
  return (
    hostname === 'localhost' ||
    hostname.endsWith('.localhost') ||
    hostname === '[::1]' ||
    /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname)
  );
}

/**
 * A logout URI: absolute http(s), no fragment (BCL §2.2, FCL §2); https in production except on a
 * loopback host (a relying party beside the provider). null or '' clears it. Throws invalid_request.
 */
export function checkLogoutUri(field: string, uri: string | null | undefined, isProduction: boolean): string | null {
  const value = uri?.trim() ?? '';
  if (value === '') return null;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw invalidRequest(`${field}: "${value}" is not an absolute URL`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw invalidRequest(`${field}: "${value}" must be an http or https URL`);
  if (url.hash || value.includes('#')) throw invalidRequest(`${field}: "${value}" must not contain a fragment`);
  if (isProduction && url.protocol === 'http:' && !isLoopbackHost(url.hostname)) {
    throw invalidRequest(
      `${field}: "${value}" must use https (http only on a loopback host: localhost, 127.0.0.1, [::1])`,
    );
  }
  return value;
}

/**
 * The stored form of the fields given (those left out stay undefined: unchanged). The algorithm
 * belongs to standard platforms (a seed platform signs every ID token HS512) — null
 * clears it anywhere; HS512 is keyed with the client secret, so only a confidential client has it.
 */
export function checkSigningAndLogout(input: ClientSigningAndLogoutInput, ctx: ClientSigningAndLogoutContext) {
  const alg = input.idTokenSignedResponseAlg;
  if (alg && ctx.signingProfile !== 'standard') {
    throw invalidRequest(
      `id_token_signed_response_alg: applies to standard platforms only (this platform uses "${ctx.signingProfile}": its ID tokens are HS512)`,
    );
  }
  const algAfter = alg === undefined ? ctx.currentAlg : alg;
  if (algAfter === 'HS512' && ctx.type !== 'confidential') {
    throw invalidRequest(
      'id_token_signed_response_alg: HS512 is keyed with the client secret: confidential clients only',
    );
  }
  return {
    idTokenSignedResponseAlg: alg === undefined ? undefined : alg,
    backchannelLogoutUri:
      input.backchannelLogoutUri === undefined
        ? undefined
        : checkLogoutUri('backchannel_logout_uri', input.backchannelLogoutUri, ctx.isProduction),
    backchannelLogoutSessionRequired: input.backchannelLogoutSessionRequired,
    frontchannelLogoutUri:
      input.frontchannelLogoutUri === undefined
        ? undefined
        : checkLogoutUri('frontchannel_logout_uri', input.frontchannelLogoutUri, ctx.isProduction),
    frontchannelLogoutSessionRequired: input.frontchannelLogoutSessionRequired,
  };
}
