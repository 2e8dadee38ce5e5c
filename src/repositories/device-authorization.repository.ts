import { preparedQuery, type Db, type Queryable } from '../db';
import type { DeviceAuthorization, DeviceAuthorizationStatus } from '../domain/device-authorization';
import type { PreparedTokens } from '../domain/tokens';
import { ACCESS_EXPIRY, type TokenTarget } from './grant-statements.repository';
import { userFromJson, type UserRow } from './user.repository';

export interface NewDeviceAuthorization {
  id: string;
  deviceCodeHash: string;
  userCodeHash: string;
  platformId: string;
  clientId: string;
  scope: string;
  resources: { uri: string; scopes: string[] }[];
  expiresAt: Date;
  intervalSeconds: number;
  createdAt: Date;
}

const toAuthorization = (r: any): DeviceAuthorization => ({
  id: r.id,
  platformId: r.platform_id,
  clientId: r.client_id,
  scope: r.scope,
  resources: typeof r.resource_grants === 'string' ? JSON.parse(r.resource_grants) : (r.resource_grants ?? []),
  status: r.status as DeviceAuthorizationStatus,
  expiresAt: r.expires_at,
});

/** Inserts a pending authorization; a user code already taken is the unique violation the caller retries on. */
export async function insert(db: Queryable, a: NewDeviceAuthorization): Promise<void> {
  await db('device_authorizations').insert({
    id: a.id,
    device_code_hash: a.deviceCodeHash,
    user_code_hash: a.userCodeHash,
    platform_id: a.platformId,
    client_id: a.clientId,
    scope: a.scope,
    resources: a.resources.map((r) => r.uri),
    resource_grants: JSON.stringify(a.resources),
    expires_at: a.expiresAt,
    interval_seconds: a.intervalSeconds,
    created_at: a.createdAt,
  });
}

/** By the digest of its normalised user code, whatever its platform (BASE_URL/device names none). */
export async function findByUserCodeHash(
  db: Queryable,
  userCodeHash: string,
): Promise<DeviceAuthorization | undefined> {
  const row = await db('device_authorizations').where({ user_code_hash: userCodeHash }).first();
  return row && toAuthorization(row);
}

export async function findById(db: Queryable, id: string): Promise<DeviceAuthorization | undefined> {
  const row = await db('device_authorizations').where({ id }).first();
  return row && toAuthorization(row);
}

export type DeviceDecision =
  | { status: 'approved'; userId: string; authTime: Date; amr: string | null; acr: string | null }
  | { status: 'denied'; userId: string | null };

/**
 * Records the person's answer, once: only a pending authorization that has not expired changes.
 * Returns it as changed, or undefined when it was not pending or had expired (the caller reads why).
 */
export async function decide(
  db: Queryable,
  id: string,
  decision: DeviceDecision,
  now: Date,
): Promise<DeviceAuthorization | undefined> {
  const [row] = await db('device_authorizations')
    .where({ id, status: 'pending' })
    .andWhere('expires_at', '>', now)
    .update({
      status: decision.status,
      user_id: decision.userId,
      ...(decision.status === 'approved' ? { auth_time: decision.authTime, amr: decision.amr, acr: decision.acr } : {}),
      decided_at: now,
    })
    .returning('*');
  return row && toAuthorization(row);
}

export interface DeviceCodeRedemptionRow {
  id: string;
  clientId: string;
  status: DeviceAuthorizationStatus;
  scope: string;
  expiresAt: Date;
  authTime: Date | null;
  amr: string | null;
  acr: string | null;
  /** Pending, and polled again sooner than the interval allows (RFC 8628 §3.5 slow_down). */
  tooFast: boolean;
  /** The interval after this poll (grown by a slow_down); null when the poll changed nothing. */
  intervalSeconds: number | null;
  /** The access token's audience (the requested resources, else all the request named) and whether the grant and registry allow it. */
  audience: string[];
  targetOk: boolean;
  accessExpiresAt: Date | null;
  /** Approved and redeemed now: the tokens below were stored and the device code is spent. */
  redeemed: boolean;
  hasRefreshToken: boolean;
  user: UserRow | null;
}

/**
 * A poll of the token endpoint with a device code (RFC 8628 §3.4), in ONE statement like the other
 * grants (grant-statements.repository.ts): the row is locked; a pending one records the poll (and
 * grows its interval when it came too soon); an approved one bound to this client, unexpired and
 * within its audience is consumed and its tokens stored (a refresh family only with
 * offline_access, no browser sign-in: the device is not that browser). The service reads the
 * returned row to say which answer is due.
 */
export async function redeemDeviceCode(
  db: Db,
  p: {
    platformId: string;
    deviceCodeHash: string;
    clientId: string;
    slowDownSeconds: number;
    target: TokenTarget;
    tokens: PreparedTokens;
  },
): Promise<DeviceCodeRedemptionRow | undefined> {
  const t = p.tokens;
  const g = p.target;
  const rows = await preparedQuery(
    db,
    'latchkey_redeem_device_code',
    `WITH d AS (
       SELECT x.*, COALESCE(CAST($5 AS text[]), x.resources) AS audience
       FROM device_authorizations x WHERE platform_id = $1 AND device_code_hash = $2 FOR UPDATE
     ), target AS (
       SELECT d.*, (audience <@ resources AND audience <@ CAST($6 AS text[])) AS target_ok,
              (last_polled_at IS NOT NULL AND last_polled_at + interval_seconds * interval '1 second' > $4) AS too_fast
       FROM d
     ), polled AS (
       UPDATE device_authorizations x
       SET last_polled_at = $4, interval_seconds = x.interval_seconds + CASE WHEN target.too_fast THEN $8 ELSE 0 END
       FROM target
       WHERE x.id = target.id AND target.client_id = $3 AND target.status = 'pending' AND target.expires_at > $4
       RETURNING x.interval_seconds
     ), ok AS (
       SELECT * FROM target
       WHERE client_id = $3 AND status = 'approved' AND expires_at > $4 AND target_ok AND user_id IS NOT NULL
     ), consumed AS (
       UPDATE device_authorizations SET status = 'consumed', last_polled_at = $4 WHERE id IN (SELECT id FROM ok)
     ), fam AS (
       INSERT INTO refresh_token_families (id, platform_id, client_id, user_id, code_id, scope, auth_time, browser_session_id, amr, acr, resources)
       SELECT $9, platform_id, client_id, user_id, NULL, scope, auth_time, NULL, amr, acr, resources FROM ok
       WHERE 'offline_access' = ANY (string_to_array(scope, ' '))
       RETURNING id
     ), rt AS (
       INSERT INTO refresh_tokens (id, family_id, token_hash, expires_at) SELECT $10, id, $11, $12 FROM fam
     )
     SELECT target.id, target.client_id, target.status, target.scope, target.expires_at, target.auth_time, target.amr, target.acr,
            target.too_fast, target.audience, target.target_ok,
            (SELECT interval_seconds FROM polled) AS new_interval_seconds,
            (SELECT ${ACCESS_EXPIRY('$13', '$6', '$7')} FROM ok) AS access_expires_at,
            EXISTS (SELECT 1 FROM ok) AS redeemed,
            EXISTS (SELECT 1 FROM fam) AS has_refresh_token,
            (SELECT row_to_json(u.*) FROM users u WHERE u.id = target.user_id) AS user_json
     FROM target`,
    [
      p.platformId,
      p.deviceCodeHash,
      p.clientId,
      t.now,
      g.requested,
      g.registered.map((r) => r.uri),
      g.registered.map((r) => r.accessExpiresAt),
      p.slowDownSeconds,
      t.familyId,
      t.refreshId,
      t.refreshHash,
      t.refreshExpiresAt,
      t.accessExpiresAt,
    ],
  );
  const r = rows[0];
  if (!r) return undefined;
  return {
    id: r.id,
    clientId: r.client_id,
    status: r.status,
    scope: r.scope,
    expiresAt: r.expires_at,
    authTime: r.auth_time ?? null,
    amr: r.amr ?? null,
    acr: r.acr ?? null,
    tooFast: r.too_fast,
    intervalSeconds: r.new_interval_seconds ?? null,
    audience: r.audience,
    targetOk: r.target_ok,
    accessExpiresAt: r.access_expires_at ?? null,
    redeemed: r.redeemed,
    hasRefreshToken: r.has_refresh_token,
    user: r.user_json ? userFromJson(r.user_json) : null,
  };
}
