import type { ActiveToken } from '../domain/tokens';

const seconds = (d: Date) => Math.floor(d.getTime() / 1000);

/**
 * RFC 7662 with the spec's fields, plus `iss`, `aud`, `jti` and RFC 8693's `act` where the token has
 * them (standard platforms only); anything inactive is `{"active": false}` alone.
 */
export function presentIntrospection(t: ActiveToken | undefined) {
  if (!t) return { active: false };
  return {
    active: true,
    sub: t.sub,
    // The spec's copy of the user's id: a token no user is behind has none.
    ...(t.isUserless ? {} : { human_guid: t.sub }),
    client_id: t.clientId,
    scope: t.scope,
    token_type: 'Bearer',
    exp: seconds(t.expiresAt),
    iat: seconds(t.issuedAt),
    ...(t.iss ? { iss: t.iss } : {}),
    ...(t.aud ? { aud: t.aud } : {}),
    ...(t.jti ? { jti: t.jti } : {}),
    ...(t.act ? { act: t.act } : {}),
  };
}
