import { OAuthError } from '../errors';
import { OutboundRequestError, outboundFetchFromConfig, type OutboundFetch } from '../net/outbound-fetch';
import { freshnessSeconds } from '../net/http-freshness';
import {
  clientIdUrlProblem,
  hostAllowed,
  metadataDocumentClientOf,
  parseClientMetadataDocument,
  type ClientMetadataDocumentPolicy,
  type MetadataDocumentClient,
} from '../domain/client-metadata-document';
import type { AuditContext } from '../domain/audit';
import { shownOnConsentChanged, type Client } from '../domain/client';
import type { Platform } from '../domain/platform';
import { newId } from '../crypto/random';
import * as consents from '../repositories/consent.repository';
import * as clients from '../repositories/client.repository';
import type { Audit } from './audit.service';
import type { Deps } from './deps';
import { createTtlCache } from './ttl-cache';

/** The draft's §8.7 recommends reading at most 5 kilobytes; a document is small, so an answer is quick or none. */
export const CLIENT_METADATA_FETCH_LIMITS = { timeoutMs: 5000, maxResponseBytes: 5 * 1024 };

/** A document is kept as its cache headers say, within these bounds (the draft's §5.2 lets us set them). */
export const DOCUMENT_CACHE_MIN_MS = 5 * 60_000;
export const DOCUMENT_CACHE_MAX_MS = 24 * 3_600_000;
/** Without cache headers. */
export const DOCUMENT_CACHE_DEFAULT_MS = 3_600_000;
/** A URL that failed is not fetched again for this long: refused at once, so it cannot make us fetch repeatedly. */
export const FAILED_FETCH_BACKOFF_MS = 60_000;

type Fetched =
  | { ok: true; doc: MetadataDocumentClient; fetchedAt: Date }
  | { ok: false; kind: 'client_metadata.fetch_failed' | 'client_metadata.refused'; reason: string };

const SYSTEM: AuditContext = { actorType: 'system' };

/** RFC 6749 §4.1.2.1 and the draft's §6: a client that cannot be verified is an invalid client, shown on the error page, never redirected to. */
const invalidClient = (description: string) => new OAuthError('invalid_client', description);

/** JSON, as the draft's §4 allows it: application/json or application/…+json, with any parameters. */
function isJson(contentType: string | null): boolean {
  const type = (contentType ?? '').split(';')[0].trim().toLowerCase();
  return type === 'application/json' || /^application\/[a-z0-9!#$&^_.-]+\+json$/.test(type);
}

/** How long to keep a document: null when its headers ask for none (no-store, no-cache, max-age=0). */
function cacheLifetimeMs(headers: Headers, nowMs: number): number | null {
  const seconds = freshnessSeconds(headers, nowMs);
  if (seconds === undefined) return DOCUMENT_CACHE_DEFAULT_MS;
  if (seconds === 0) return null;
  return Math.min(DOCUMENT_CACHE_MAX_MS, Math.max(DOCUMENT_CACHE_MIN_MS, seconds * 1000));
}

/**
 * Clients identified by a Client ID Metadata Document (draft-ietf-oauth-client-id-metadata-document):
 * the document fetched through the outbound guard (src/net/outbound-fetch.ts: SSRF rules, no
 * redirects, timeout, size cap), validated by src/domain/client-metadata-document.ts, cached by its
 * HTTP cache headers within bounds; one fetch per URL at a time; failures audited and backed off.
 * `outbound` is for tests (a local https server's certificate); the app uses the config's guard.
 */
export function createClientMetadataDocuments(
  deps: Deps,
  audit: Audit,
  outbound: OutboundFetch = outboundFetchFromConfig(deps.config, CLIENT_METADATA_FETCH_LIMITS),
) {
  const documents = createTtlCache<{ doc: MetadataDocumentClient; fetchedAt: Date }>(deps.now, {
    ttlMs: DOCUMENT_CACHE_DEFAULT_MS,
    max: 10_000,
    maxBytes: 16 * 1024 * 1024,
  });
  const failures = createTtlCache<string>(deps.now, {
    ttlMs: FAILED_FETCH_BACKOFF_MS,
    max: 10_000,
    maxBytes: 4 * 1024 * 1024,
  });
  const inFlight = new Map<string, Promise<Fetched>>();

  async function fetchDocument(url: string): Promise<Fetched> {
    const failed = (reason: string): Fetched => ({ ok: false, kind: 'client_metadata.fetch_failed', reason });
    let res;
    try {
      res = await outbound(url, { headers: { accept: 'application/json' } });
    } catch (err) {
      if (err instanceof OutboundRequestError) return failed(err.message); // reason and host only, never a body
      throw err;
    }
    // The draft's §5: 200 only, and a redirect is not followed (the guard never follows one).
    if (res.status >= 300 && res.status < 400)
      return failed(`answered ${res.status}, a redirect, which is not followed`);
    if (res.status !== 200) return failed(`answered ${res.status}, not 200`);
    if (!isJson(res.headers.get('content-type')))
      return failed('did not answer with JSON (Content-Type application/json)');
    let body: unknown;
    try {
      body = JSON.parse(res.body);
    } catch {
      return { ok: false, kind: 'client_metadata.refused', reason: 'the document is not valid JSON' };
    }
    const parsed = parseClientMetadataDocument(url, body);
    if (!parsed.ok) return { ok: false, kind: 'client_metadata.refused', reason: parsed.reason };
    const fetchedAt = deps.now();
    const lifetime = cacheLifetimeMs(res.headers, fetchedAt.getTime());
    if (lifetime !== null) documents.set(url, { doc: parsed.client, fetchedAt }, lifetime);
    return { ok: true, doc: parsed.client, fetchedAt };
  }

  /** One fetch per URL at a time; a failure is remembered for the back-off and audited once. */
  function fetchOnce(platformId: string, url: string, host: string, ctx: AuditContext): Promise<Fetched> {
    const pending = inFlight.get(url);
    if (pending) return pending;
    const work = fetchDocument(url)
      .then(async (outcome) => {
        if (!outcome.ok) {
          failures.set(url, outcome.reason);
          await audit
            .record(deps.db, ctx, { kind: outcome.kind, platformId, details: { host, reason: outcome.reason } })
            .catch((err: unknown) => {
              deps.logger.warn({ err, host }, 'client metadata document: audit event not recorded');
            });
        }
        return outcome;
      })
      .finally(() => inFlight.delete(url));
    inFlight.set(url, work);
    return work;
  }

  /**
   * The client whose `client_id` is `clientIdUrl`, from its metadata document, for a `standard`
   * platform whose policy allows the URL's host. Throws invalid_client with the reason (the
   * authorize endpoint shows it on the error page; the token endpoint answers it).
   */
  async function resolve(
    platform: Pick<Platform, 'id' | 'signingProfile'>,
    clientIdUrl: string,
    policy: ClientMetadataDocumentPolicy,
    ctx: AuditContext = SYSTEM,
  ): Promise<Client> {
    if (platform.signingProfile !== 'standard')
      throw invalidClient('Client ID metadata documents are for standard platforms only');
    const problem = clientIdUrlProblem(clientIdUrl);
    if (problem !== undefined) throw invalidClient(`The client_id is not a client identifier URL: it ${problem}`);
    const host = new URL(clientIdUrl).hostname;
    if (!hostAllowed(policy, host)) {
      throw invalidClient(
        policy.trim().toLowerCase() === 'off' || !policy.trim()
          ? 'This sign-in service does not accept client ID metadata documents (a URL as client_id)'
          : `This sign-in service does not accept client ID metadata documents from ${host}`,
      );
    }
    const cached = documents.get(clientIdUrl);
    if (cached) return metadataDocumentClientOf(platform.id, cached.value.doc, cached.value.fetchedAt);
    const cantUse = (reason: string) =>
      invalidClient(`The client metadata document at ${host} cannot be used: ${reason}`);
    const failed = failures.get(clientIdUrl);
    if (failed) throw cantUse(`${failed.value} (on a fetch less than ${FAILED_FETCH_BACKOFF_MS / 1000} s ago)`);
    const outcome = await fetchOnce(platform.id, clientIdUrl, host, ctx);
    if (!outcome.ok) throw cantUse(outcome.reason);
    return metadataDocumentClientOf(platform.id, outcome.doc, outcome.fetchedAt);
  }

  /** The document's fields a stored row keeps, in the order update() takes them. */
  const documentFields = (c: Client) => ({
    name: c.name,
    redirectUris: c.redirectUris,
    postLogoutRedirectUris: c.postLogoutRedirectUris,
    allowedScopes: c.allowedScopes,
    grantTypes: c.grantTypes,
    logoUri: c.logoUri,
    clientUri: c.clientUri,
    policyUri: c.policyUri,
    tosUri: c.tosUri,
  });

  /**
   * The stored client of a platform named by `clientIdUrl`: the document resolved (from the cache
   * while it is fresh, else fetched again) under the platform's policy, then its row, inserted on
   * the first use under a new id (codes, tokens, consents and audit events reference clients.id)
   * and updated when a later fetch brings other fields. Throws as resolve() does.
   */
  async function storedClient(platform: Platform, clientIdUrl: string, ctx: AuditContext = SYSTEM): Promise<Client> {
    const fromDocument = await resolve(platform, clientIdUrl, platform.clientMetadataDocuments, ctx);
    const fields = documentFields(fromDocument);
    const stored =
      (await clients.findByMetadataDocumentUrl(deps.db, platform.id, clientIdUrl)) ??
      (await clients.insertMetadataDocumentClient(deps.db, {
        ...fromDocument,
        id: newId(),
        metadataDocumentUrl: clientIdUrl,
        createdAt: deps.now(),
      })) ??
      (await clients.findByMetadataDocumentUrl(deps.db, platform.id, clientIdUrl));
    if (!stored) throw new Error('client metadata document: the stored row vanished'); // deleted between insert and read
    if (JSON.stringify(documentFields(stored)) === JSON.stringify(fields)) return stored;
    return deps.db.transaction(async (trx) => {
      const updated = await clients.update(trx, platform.id, stored.id, fields);
      // As for an RFC 7592 update: consent was given to what the page showed (docs/decisions.md).
      if (shownOnConsentChanged(stored, updated)) await consents.removeForClient(trx, stored.id);
      return updated;
    });
  }

  return { resolve, storedClient };
}

export type ClientMetadataDocuments = ReturnType<typeof createClientMetadataDocuments>;
