import { OAuthError } from '../../errors';
import { OutboundRequestError, outboundFetchFromConfig, type OutboundFetch } from '../../net/outbound-fetch';
import { freshnessSeconds } from '../../net/http-freshness';
import { PRIVATE_JWK_MEMBERS, type Jwk } from '../../domain/client-assertion';
import type { AuditContext } from '../../domain/audit';
import type { Client } from '../../domain/client';
import type { Audit } from '../audit.service';
import type { Deps } from '../deps';
import { createTtlCache } from '../ttl-cache';

/** A key set is small (twenty RSA-4096 keys are under 20 KB); an answer is quick or none. */
export const CLIENT_JWKS_FETCH_LIMITS = { timeoutMs: 5000, maxResponseBytes: 64 * 1024 };
/** A fetched set is kept as its cache headers say, within these bounds; an hour without them. */
export const JWKS_CACHE_MIN_MS = 5 * 60_000;
export const JWKS_CACHE_MAX_MS = 24 * 3_600_000;
export const JWKS_CACHE_DEFAULT_MS = 3_600_000;
/**
 * A jwks_uri is fetched at most once in this long for an unknown kid (a key rotation), and a URI
 * that failed is refused without a fetch for as long: no request can make us fetch on every request.
 */
export const JWKS_REFETCH_INTERVAL_MS = 60_000;
const JWKS_MAX_KEYS = 100;

type Fetched = { ok: true; keys: Jwk[] } | { ok: false; reason: string };

const invalidClient = (description: string) => new OAuthError('invalid_client', description);

/** How long to keep a set: its freshness within the bounds; `no-store`, `no-cache`, `max-age=0` → the minimum still (rotation is caught by kid). */
function cacheLifetimeMs(headers: Headers, nowMs: number): number {
  const seconds = freshnessSeconds(headers, nowMs);
  if (seconds === undefined) return JWKS_CACHE_DEFAULT_MS;
  return Math.min(JWKS_CACHE_MAX_MS, Math.max(JWKS_CACHE_MIN_MS, seconds * 1000));
}

/** A JWK Set (RFC 7517 §5) of public keys, or the reason it is not one. Keys of other types are kept and never fit an algorithm. */
function parseJwks(body: string): Fetched {
  let set: unknown;
  try {
    set = JSON.parse(body);
  } catch {
    return { ok: false, reason: 'the answer is not valid JSON' };
  }
  const keys = (set as { keys?: unknown } | null)?.keys;
  if (typeof set !== 'object' || set === null || !Array.isArray(keys))
    return { ok: false, reason: 'the answer is not a JWK Set ({"keys": [...]})' };
  if (keys.length > JWKS_MAX_KEYS) return { ok: false, reason: `the set holds more than ${JWKS_MAX_KEYS} keys` };
  if (keys.some((k) => typeof k !== 'object' || k === null || Array.isArray(k)))
    return { ok: false, reason: 'every key of the set must be a JSON object' };
  if (keys.some((k) => PRIVATE_JWK_MEMBERS.some((m) => m in k)))
    return { ok: false, reason: 'the set holds private or symmetric key material; publish public keys only' };
  return { ok: true, keys: keys as Jwk[] };
}

/**
 * The public keys a client signs its assertions with (RFC 7591 §2 jwks / jwks_uri): inline from
 * its registration, or fetched from its jwks_uri through the outbound guard (src/net/outbound-fetch.ts:
 * SSRF rules, no redirects, timeout, size cap), kept in a bounded LRU by the set's cache headers,
 * fetched again on an unknown kid at most once per JWKS_REFETCH_INTERVAL_MS per URI. One fetch per
 * URI at a time; a failure is audited (`client.jwks_fetch_failed`) and backed off. `outbound` is
 * for tests (a local https server's certificate); the app uses the config's guard.
 */
export function createClientJwks(
  deps: Deps,
  audit: Audit,
  outbound: OutboundFetch = outboundFetchFromConfig(deps.config, CLIENT_JWKS_FETCH_LIMITS),
) {
  // By client id, with the URI it came from: a changed jwks_uri never serves the old set.
  const sets = createTtlCache<{ uri: string; keys: Jwk[] }>(deps.now, {
    ttlMs: JWKS_CACHE_DEFAULT_MS,
    max: 10_000,
    maxBytes: 32 * 1024 * 1024,
  });
  // By URI: when it was last fetched (the refetch interval), and why it last failed (the back-off).
  const fetchedAt = createTtlCache<true>(deps.now, { ttlMs: JWKS_REFETCH_INTERVAL_MS, max: 10_000 });
  const failures = createTtlCache<string>(deps.now, {
    ttlMs: JWKS_REFETCH_INTERVAL_MS,
    max: 10_000,
    maxBytes: 4 * 1024 * 1024,
  });
  const inFlight = new Map<string, Promise<Fetched>>();

  async function fetchSet(uri: string): Promise<Fetched & { lifetimeMs?: number }> {
    let res;
    try {
      res = await outbound(uri, { headers: { accept: 'application/jwk-set+json, application/json' } });
    } catch (err) {
      if (err instanceof OutboundRequestError) return { ok: false, reason: err.message }; // reason and host only
      throw err;
    }
    if (res.status >= 300 && res.status < 400)
      return { ok: false, reason: `answered ${res.status}, a redirect, which is not followed` };
    if (res.status !== 200) return { ok: false, reason: `answered ${res.status}, not 200` };
    const parsed = parseJwks(res.body);
    return parsed.ok ? { ...parsed, lifetimeMs: cacheLifetimeMs(res.headers, deps.now().getTime()) } : parsed;
  }

  /** One fetch per URI at a time, remembered for the refetch interval; a failure backed off and audited once. */
  function fetchOnce(client: Client, uri: string, ctx: AuditContext): Promise<Fetched> {
    const pending = inFlight.get(uri);
    if (pending) return pending;
    fetchedAt.set(uri, true);
    const work = fetchSet(uri)
      .then(async (outcome) => {
        if (outcome.ok) {
          failures.delete(uri);
          sets.set(client.id, { uri, keys: outcome.keys }, outcome.lifetimeMs);
          return outcome;
        }
        failures.set(uri, outcome.reason);
        await audit
          .record(deps.db, ctx, {
            kind: 'client.jwks_fetch_failed',
            platformId: client.platformId,
            clientId: client.id,
            details: { host: hostOf(uri), reason: outcome.reason },
          })
          .catch((err: unknown) => deps.logger.warn({ err, host: hostOf(uri) }, 'jwks_uri: audit event not recorded'));
        return outcome;
      })
      .finally(() => inFlight.delete(uri));
    inFlight.set(uri, work);
    return work;
  }

  async function fetchOrRefuse(client: Client, uri: string, ctx: AuditContext): Promise<Jwk[]> {
    const failed = failures.get(uri);
    const cantUse = (reason: string) =>
      invalidClient(`The client's jwks_uri (${hostOf(uri)}) cannot be used: ${reason}`);
    if (failed) throw cantUse(`${failed.value} (on a fetch less than ${JWKS_REFETCH_INTERVAL_MS / 1000} s ago)`);
    const outcome = await fetchOnce(client, uri, ctx);
    if (!outcome.ok) throw cantUse(outcome.reason);
    return outcome.keys;
  }

  return {
    /** The client's keys: its registered set, or its jwks_uri's (cached, else fetched). Throws invalid_client when the URI cannot be used. */
    async keysOf(client: Client, ctx: AuditContext): Promise<Jwk[]> {
      if (client.jwks) return client.jwks.keys;
      const uri = client.jwksUri;
      if (!uri) return [];
      const hit = sets.get(client.id);
      if (hit && hit.value.uri === uri) return hit.value.keys;
      return fetchOrRefuse(client, uri, ctx);
    },

    /**
     * After an unknown kid: the jwks_uri's set fetched again, unless it was fetched less than
     * JWKS_REFETCH_INTERVAL_MS ago (then undefined: nothing new to look at). Throws as keysOf.
     */
    async refresh(client: Client, ctx: AuditContext): Promise<Jwk[] | undefined> {
      const uri = client.jwksUri;
      if (client.jwks || !uri || fetchedAt.get(uri)) return undefined;
      return fetchOrRefuse(client, uri, ctx);
    },

    /** A client changed or deleted: its cached set goes, and its URI may be fetched again at once. */
    forget(clientId: string) {
      const hit = sets.get(clientId);
      sets.delete(clientId);
      if (hit) {
        fetchedAt.delete(hit.value.uri);
        failures.delete(hit.value.uri);
      }
    },
  };
}

export type ClientJwksSource = ReturnType<typeof createClientJwks>;

function hostOf(uri: string): string {
  try {
    return new URL(uri).host;
  } catch {
    return '(not a URL)';
  }
}
