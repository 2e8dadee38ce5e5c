// The admin mode's data (BENCH_DATA=admin): one platform with 1M users and an audit log of 10M
// events at scale 1, loaded with SQL (INSERT … SELECT over generate_series, never the API) on the
// large-data mode's loading connections (bench/large-data.ts: its user rows, FK triggers skipped,
// the indexes no foreign key needs dropped for the load and rebuilt with their own definitions).
//
// Events have the columns and value shapes the provider writes (src/repositories/audit-event.repository.ts):
// ids in time order (bigserial), a year of history, mostly sign-ins of the platform's users
// (subject = the user, actor 'user'), their failures, consents, logouts, password and second-factor
// events, client-credentials grants (actor 'client'), a share of admin changes (actor 'admin_token'),
// and 1 % of events of no platform (operators signing in to the console).
import type { Client } from 'pg';
import {
  dropIndexesForLoad,
  rebuildIndexes,
  usersSql,
  userExpr,
  withClient,
  withLoader,
  type LoadReport,
  type PlatformSpec,
} from './large-data';

export const ADMIN_SIZES = { users: 1_000_000, auditEvents: 10_000_000 } as const;
/** Rows per INSERT statement (one transaction each). */
const CHUNK = 500_000;

export interface AdminCounts {
  users: number;
  auditEvents: number;
}

export const adminCounts = (scale: number): AdminCounts => ({
  users: Math.max(1, Math.round(ADMIN_SIZES.users * scale)),
  auditEvents: Math.max(1, Math.round(ADMIN_SIZES.auditEvents * scale)),
});

/** Event e's kind and actor, by e % 100: the mix of a platform whose users sign in daily. */
const KIND = `CASE
  WHEN m < 55 THEN 'sign_in.succeeded' WHEN m < 63 THEN 'sign_in.failed' WHEN m < 64 THEN 'sign_in.locked_out'
  WHEN m < 70 THEN 'mfa.used' WHEN m < 74 THEN 'consent.granted' WHEN m < 82 THEN 'logout'
  WHEN m < 84 THEN 'password.changed' WHEN m < 85 THEN 'password.reset' WHEN m < 88 THEN 'sign_up'
  WHEN m < 89 THEN 'email.verified' WHEN m < 95 THEN 'client_credentials.issued' WHEN m < 97 THEN 'user.updated'
  WHEN m < 98 THEN 'user.disabled' WHEN m < 99 THEN 'client.updated' ELSE 'operator.signed_in' END`;
const ACTOR = `CASE WHEN m < 89 THEN 'user' WHEN m < 95 THEN 'client' WHEN m < 99 THEN 'admin_token' ELSE 'operator' END`;

function auditEventsSql(p: PlatformSpec, clientId: string, total: number, lo: number, hi: number): string {
  const U = p.n.users;
  return `INSERT INTO audit_events (occurred_at, kind, actor_type, actor_id, actor_name, platform_id, subject, client_id, source, user_agent, request_id, details)
SELECT now() - ((${total - 1} - e)::float8 / ${total}) * interval '365 days', ${KIND}, ${ACTOR},
       CASE WHEN m < 89 THEN u.id::text WHEN m < 95 THEN '${clientId}' WHEN m < 99 THEN 'a1b2c3d4-0000-4000-8000-00000000000' || (e % 3) ELSE 'op-' || (e % 5) END,
       CASE WHEN m < 95 THEN NULL WHEN m < 99 THEN 'deploy bot' ELSE 'Operator ' || (e % 5) END,
       CASE WHEN m < 99 THEN '${p.id}'::uuid END,
       CASE WHEN m < 89 OR (m >= 95 AND m < 98) THEN u.id END,
       CASE WHEN m >= 89 AND m < 95 OR m IN (73, 98) THEN '${clientId}'::uuid END,
       '10.' || (e % 250) || '.' || ((e / 250) % 250) || '.' || ((e / 62500) % 250),
       CASE WHEN m < 89 THEN 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/1' || (20 + e % 10) || '.0 Safari/537.36' ELSE 'latchkey-client/1.0' END,
       substr(md5('req' || e), 1, 16),
       CASE WHEN m < 55 THEN jsonb_build_object('amr', CASE WHEN m % 5 = 0 THEN 'pwd otp' ELSE 'pwd' END)
            WHEN m < 63 THEN jsonb_build_object('reason', 'wrong_password')
            WHEN m >= 95 AND m < 97 THEN jsonb_build_object('given_name', jsonb_build_object('from', 'Ada', 'to', 'Ada Lovelace'))
            ELSE '{}'::jsonb END
FROM generate_series(${lo}::bigint, ${hi - 1}::bigint) AS e
CROSS JOIN LATERAL (SELECT (e % 100)::int AS m) x
CROSS JOIN LATERAL (SELECT ${userExpr(p, `((e * 7919) % ${U})`)} AS id) u
ORDER BY e`;
}

/** Loads the users and audit events of `platform` (created beforehand with its client, through the admin CLI). */
export async function loadAdminData(
  databaseUrl: string,
  scale: number,
  platform: { id: string; clientId: string },
  log: (m: string) => void,
): Promise<LoadReport> {
  const n = adminCounts(scale);
  const spec: PlatformSpec = {
    tag: 'admin',
    id: platform.id,
    n: { users: n.users, families: 0, refreshTokens: 0, accessTokens: 0, consents: 0, clients: 1 },
  };
  const steps: LoadReport['steps'] = [];
  const t0 = performance.now();
  const chunks = async (
    c: Client,
    step: string,
    total: number,
    sql: (lo: number, hi: number) => string,
  ): Promise<void> => {
    const t = performance.now();
    let rows = 0;
    for (let lo = 0; lo < total; lo += CHUNK) {
      rows += (await c.query(sql(lo, Math.min(total, lo + CHUNK)))).rowCount ?? 0;
      log(`      ${step}: ${rows.toLocaleString('en-US')} / ${total.toLocaleString('en-US')}`);
    }
    steps.push({ step, rows, seconds: (performance.now() - t) / 1000 });
  };
  const saved = await dropIndexesForLoad(databaseUrl, ['users', 'audit_events'], steps, log);
  try {
    // Two connections: the users on one, the audit events on the other.
    await Promise.all([
      withLoader(databaseUrl, (c) => chunks(c, 'users', n.users, (lo, hi) => usersSql(spec, lo, hi))),
      withLoader(databaseUrl, (c) =>
        chunks(c, 'audit_events', n.auditEvents, (lo, hi) =>
          auditEventsSql(spec, platform.clientId, n.auditEvents, lo, hi),
        ),
      ),
    ]);
  } finally {
    await rebuildIndexes(databaseUrl, saved, (x) => x.table === 'audit_events', steps, log);
  }
  const tv = performance.now();
  await withClient(databaseUrl, async (c) => {
    await c.query('VACUUM (ANALYZE) users, audit_events');
    await c.query('CHECKPOINT');
  });
  steps.push({ step: 'VACUUM (ANALYZE) + CHECKPOINT', rows: 0, seconds: (performance.now() - tv) / 1000 });
  const counts = await withClient(databaseUrl, async (c) => {
    const out: Record<string, number> = {};
    for (const t of ['users', 'audit_events'])
      out[t] = Number((await c.query(`SELECT count(*) AS n FROM ${t}`)).rows[0].n);
    return out;
  });
  return {
    scale,
    seconds: (performance.now() - t0) / 1000,
    steps,
    counts,
    expired: { accessTokens: 0, refreshTokens: 0 },
  };
}
