/**
 * An access token is kept as no row of its own (docs/decisions.md, "Access tokens without a row"):
 * its `jti` names the grant it lives by, and the token is live while that grant is. The grant is
 *
 * - `family`: a refresh-token family (a code exchanged with offline_access, or a refresh);
 * - `code`: the authorization code it was exchanged for, when no refresh token was issued;
 * - `device`: the device authorization (RFC 8628) it was redeemed for, likewise;
 * - `client`: the client itself (client credentials, RFC 6749 §4.4);
 * - `legacy`: a row of `access_tokens`, for a token issued before tokens had no row (its id is the
 *   jti's digest).
 *
 * An exchanged token (RFC 8693) lives by its subject token's grant and also by a lineage row, so
 * that revoking the subject revokes it.
 */
export type TokenAnchorKind = 'family' | 'code' | 'device' | 'client' | 'legacy';

export interface TokenAnchor {
  kind: TokenAnchorKind;
  id: string;
}

export interface AccessTokenId {
  anchor: TokenAnchor;
  /** Issued by a token exchange: it also needs its lineage row. */
  exchanged: boolean;
}

const LETTER: Record<Exclude<TokenAnchorKind, 'legacy'>, string> = {
  family: 'g',
  code: 'a',
  device: 'd',
  client: 'c',
};
const KIND_OF_LETTER = new Map(Object.entries(LETTER).map(([kind, letter]) => [letter, kind as TokenAnchorKind]));
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const LEGACY = 'l';
const EXCHANGED = 'x';

/** `[x]<letter><grant id>.<random>`; a legacy grant's id is a digest (base64url, never a dot). */
export function formatAccessTokenJti(id: AccessTokenId, random: string): string {
  const letter = id.anchor.kind === 'legacy' ? LEGACY : LETTER[id.anchor.kind];
  return `${id.exchanged ? EXCHANGED : ''}${letter}${id.anchor.id}.${random}`;
}

/**
 * The grant a jti names. A jti without a dot is a legacy token's (its record is the row keyed by
 * `legacyDigest`); anything else malformed names nothing (undefined).
 */
export function parseAccessTokenJti(jti: string, legacyDigest: () => string): AccessTokenId | undefined {
  const dot = jti.indexOf('.');
  if (dot < 0) return { anchor: { kind: 'legacy', id: legacyDigest() }, exchanged: false };
  const exchanged = jti.startsWith(EXCHANGED);
  const head = jti.slice(exchanged ? 1 : 0, dot);
  const letter = head.slice(0, 1);
  const id = head.slice(1);
  if (letter === LEGACY)
    return id && /^[A-Za-z0-9_-]+$/.test(id) ? { anchor: { kind: 'legacy', id }, exchanged } : undefined;
  const kind = KIND_OF_LETTER.get(letter);
  return kind && UUID.test(id) ? { anchor: { kind, id }, exchanged } : undefined;
}

/** The refresh family an access token belongs to, if any (a refresh supersedes the family's earlier tokens). */
export const familyOf = (anchor: TokenAnchor): string | null => (anchor.kind === 'family' ? anchor.id : null);
