import { newId, randomToken } from '../crypto/random';
import { wireClientId } from '../domain/client';
import type { Queryable } from '../db';
import { afterCommit } from '../db/after-commit';
import { issuerOf } from '../domain/platform';
import { OutboundRequestError, outboundFetchFromConfig, type OutboundFetch } from '../net/outbound-fetch';
import * as logouts from '../repositories/backchannel-logout.repository';
import type { BackchannelLogoutRow } from '../repositories/backchannel-logout.repository';
import * as clients from '../repositories/client.repository';
import * as sessionClients from '../repositories/session-client.repository';
import type { Deps } from './deps';
import { retryDelaySeconds } from './mail-outbox.service';
import type { Platforms } from './platforms.service';
import { createSidOf } from './session-id';
import type { TokenSigner } from './token-signer';

/** OIDC Back-Channel Logout 1.0 §2.4: the one event a logout token carries. */
const BACKCHANNEL_LOGOUT_EVENT = 'http://schemas.openid.net/event/backchannel-logout';
/** A logout token is good for two minutes (§2.4 recommends a short lifetime); it is built at each attempt. */
const LOGOUT_TOKEN_TTL_SECONDS = 120;

/** How a worker delivers; the defaults suit production, tests shorten them. */
export interface BackchannelDeliveryOptions {
  /** Deliveries claimed per round (sent concurrently). */
  batchSize: number;
  /** How long a claim holds a row; a worker that dies while sending gives it up after this. */
  leaseSeconds: number;
  /** Delay after the first failure, doubled after each further one, up to retryMaxSeconds. */
  retryBaseSeconds: number;
  retryMaxSeconds: number;
  /** Attempts before a delivery is failed for good. */
  maxAttempts: number;
}

/** 8 attempts: retries after about 30 s, 1, 2, 4, 8, 16 and 32 min (equal jitter) — about an hour in all. */
const DEFAULT_BACKCHANNEL_DELIVERY: BackchannelDeliveryOptions = {
  batchSize: 10,
  leaseSeconds: 60,
  retryBaseSeconds: 30,
  retryMaxSeconds: 3600,
  maxAttempts: 8,
};

export interface BackchannelRound {
  claimed: number;
  delivered: number;
  retrying: number;
  failed: number;
}

type Outcome = 'delivered' | 'retrying' | 'failed';

/** Who gets a logout token: one per client and sign-in session (sid null: the session is not known). */
type Target = { clientId: string; sid: string | null };

/**
 * OIDC Back-Channel Logout 1.0. Signing out writes one row per application that
 * signed in through the ended session(s) and registered a backchannel_logout_uri, in the sign-out's
 * own transaction (it exists exactly when the sign-out does). Workers (jobs/backchannel-logout.job.ts)
 * build the logout token at send time, signed as the client's ID tokens are, and POST it, with
 * retries and backoff like the mail outbox; at least once toward each relying party.
 */
export function createBackchannelLogout(
  deps: Deps,
  platforms: Platforms,
  signer: TokenSigner,
  fetch: OutboundFetch = outboundFetchFromConfig(deps.config),
) {
  const sidOf = createSidOf(deps.config.masterKey!); // the app refuses to start without one
  const listeners = new Set<() => void>();
  const notify = () => listeners.forEach((l) => l());

  /** Writes the rows of the targets whose client is registered (and has the sid it requires). */
  async function enqueue(trx: Queryable, platformId: string, userId: string, targets: Target[]): Promise<number> {
    const receiving = await logouts.receivingClients(trx, platformId, [...new Set(targets.map((t) => t.clientId))]);
    const rows = targets
      .filter((t) => receiving.has(t.clientId) && (t.sid !== null || !receiving.get(t.clientId)!.sessionRequired))
      .map((t) => ({ id: newId(), platformId, clientId: t.clientId, userId, sid: t.sid }));
    await logouts.insertMany(trx, rows);
    if (rows.length) afterCommit(trx, notify);
    return rows.length;
  }

  /** Adds a target once per (client, sid). */
  function add(targets: Map<string, Target>, t: Target) {
    targets.set(`${t.clientId} ${t.sid ?? ''}`, t);
  }

  async function fail(
    row: BackchannelLogoutRow,
    options: BackchannelDeliveryOptions,
    error: string,
    permanent: boolean,
  ): Promise<Outcome> {
    const final = permanent || row.attempts >= options.maxAttempts;
    const retryInSeconds = retryDelaySeconds(row.attempts, options);
    await logouts.markFailed(deps.db, row.id, row.attempts, { final, retryInSeconds, error });
    const log = { logoutId: row.id, platformId: row.platformId, clientId: row.clientId, attempts: row.attempts, error };
    if (final) deps.logger.warn(log, 'back-channel logout failed: not delivered after its last attempt');
    else
      deps.logger.info(
        { ...log, retryInSeconds: Math.round(retryInSeconds) },
        'back-channel logout not delivered; will retry',
      );
    return final ? 'failed' : 'retrying';
  }

  async function deliver(row: BackchannelLogoutRow, options: BackchannelDeliveryOptions): Promise<Outcome> {
    const platform = await platforms.findPlatform(row.platformId);
    const client = platform && (await clients.findById(deps.db, row.platformId, row.clientId));
    if (!platform || !client) return fail(row, options, 'the application was deleted', true);
    if (!client.backchannelLogoutUri)
      return fail(row, options, 'the application no longer has a backchannel_logout_uri', true);
    const iat = Math.floor(deps.now().getTime() / 1000);
    // §2.4: iss, aud, iat, exp, jti, events, sub and/or sid; never a nonce.
    const claims = {
      iss: issuerOf(deps.config.baseUrl, platform),
      aud: wireClientId(client),
      iat,
      exp: iat + LOGOUT_TOKEN_TTL_SECONDS,
      jti: randomToken(16),
      sub: row.userId,
      ...(row.sid ? { sid: row.sid } : {}),
      events: { [BACKCHANNEL_LOGOUT_EVENT]: {} },
    };
    let status: number;
    try {
      const token = await signer.signForClient(platform, client, claims, 'logout+jwt');
      const res = await fetch(client.backchannelLogoutUri, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        body: new URLSearchParams({ logout_token: token }).toString(),
      });
      status = res.status;
    } catch (err) {
      // A refused target (SSRF guard) or a malformed URL will not change by retrying.
      const permanent = err instanceof OutboundRequestError && (err.reason === 'refused' || err.reason === 'bad_url');
      const reason =
        err instanceof OutboundRequestError ? `${err.reason}: ${err.message}` : `not sent: ${(err as Error).message}`;
      return fail(row, options, reason.slice(0, 300), permanent);
    }
    // §2.8: 200 OK on success; any other answer (a 400 from a stale key cache, a 5xx) is tried again.
    if (status !== 200 && status !== 204) return fail(row, options, `HTTP ${status}`, false);
    // A failure here leaves the row claimed: it is sent again once the lease ends (at least once).
    await logouts.markDelivered(deps.db, row.id, row.attempts);
    deps.logger.info(
      { logoutId: row.id, platformId: row.platformId, clientId: row.clientId, attempts: row.attempts },
      'back-channel logout delivered',
    );
    return 'delivered';
  }

  return {
    /**
     * One browser sign-in of the user ends (account page, chooser, RP-initiated logout): a logout
     * token with its sid for each application it signed in to, in `trx`. Call before the session's
     * refresh tokens are revoked (their clients count too). Returns how many were enqueued.
     */
    async enqueueForSession(
      trx: Queryable,
      platformId: string,
      userId: string,
      browserSessionId: string,
    ): Promise<number> {
      const targets = new Map<string, Target>();
      for (const r of await sessionClients.listBySession(trx, platformId, userId, browserSessionId))
        add(targets, { clientId: r.clientId, sid: r.sid });
      // Refresh tokens of this browser whose sign-in predates session_clients rows (or outlived them).
      for (const f of await logouts.liveRefreshClients(trx, platformId, userId, deps.now(), browserSessionId))
        add(targets, { clientId: f.clientId, sid: sidOf(browserSessionId, userId) });
      const n = await enqueue(trx, platformId, userId, [...targets.values()]);
      await sessionClients.removeSession(trx, platformId, userId, browserSessionId);
      return n;
    },

    /**
     * Every sign-in of the user ends (sign out everywhere, password change or reset, admin sign-out,
     * disable, delete): one logout token per application and session, in `trx`, before the refresh
     * tokens are revoked. An application holding a refresh token of an unknown session gets a
     * sub-only token, unless it requires a sid (backchannel_logout_session_required).
     */
    async enqueueForUser(trx: Queryable, platformId: string, userId: string): Promise<number> {
      const targets = new Map<string, Target>();
      const withSession = new Set<string>();
      for (const r of await sessionClients.listByUser(trx, platformId, userId)) {
        add(targets, { clientId: r.clientId, sid: r.sid });
        withSession.add(r.clientId);
      }
      const unknownSession = new Set<string>();
      for (const f of await logouts.liveRefreshClients(trx, platformId, userId, deps.now())) {
        if (f.browserSessionId) {
          add(targets, { clientId: f.clientId, sid: sidOf(f.browserSessionId, userId) });
          withSession.add(f.clientId);
        } else unknownSession.add(f.clientId);
      }
      for (const clientId of unknownSession) if (!withSession.has(clientId)) add(targets, { clientId, sid: null });
      const n = await enqueue(trx, platformId, userId, [...targets.values()]);
      await sessionClients.removeUser(trx, platformId, userId);
      return n;
    },

    /** Called after each committed enqueue of this process (the worker's nudge); returns an unsubscribe. */
    onEnqueued(listener: () => void): () => void {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },

    /** One round: claims due deliveries and sends them concurrently. */
    async deliverDue(options: Partial<BackchannelDeliveryOptions> = {}): Promise<BackchannelRound> {
      const o = { ...DEFAULT_BACKCHANNEL_DELIVERY, ...options };
      const rows = await logouts.claimDue(deps.db, o.batchSize, o.leaseSeconds);
      const results = await Promise.allSettled(rows.map((r) => deliver(r, o)));
      const round: BackchannelRound = { claimed: rows.length, delivered: 0, retrying: 0, failed: 0 };
      for (const r of results) {
        if (r.status === 'fulfilled') round[r.value] += 1;
        else
          deps.logger.warn(
            { err: (r.reason as Error).message },
            'back-channel logout outcome not recorded; it is retried after its lease',
          );
      }
      return round;
    },

    /** A client's deliveries, oldest first. */
    listForClient: (clientId: string) => logouts.listByClient(deps.db, clientId),
  };
}

export type BackchannelLogout = ReturnType<typeof createBackchannelLogout>;
