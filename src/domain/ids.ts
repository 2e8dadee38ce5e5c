/**
 * The one check for identifiers that arrive from outside (platform_guid, client_id, sub, user ids
 * in paths and forms, kid). Every identifier we issue is a UUID as randomUUID() and Postgres
 * print it: canonical 8-4-4-4-12, lower-case hex (RFC 9562 §4). Anything else — 36 dashes,
 * braces, upper case, surrounding white space, a lookalike digit — is not one of ours, so it gets
 * the answer of an unknown identifier before any query (never Postgres 22P02 → 500).
 *
 * Upper case is refused rather than folded: identifiers are compared as exact strings everywhere
 * else (client_id and sub per RFC 6749 §2.2 and OIDC Core §5.1, aud in tokens, cache and
 * rate-limit keys), so one identifier has exactly one spelling (docs/decisions.md).
 */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export function isUuid(value: unknown): value is string {
  return typeof value === 'string' && value.length === 36 && UUID.test(value);
}
