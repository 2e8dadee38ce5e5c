// The large-data mode (BENCH_DATA=large): loads a large
// platform into the benchmark's Postgres database with SQL (generate_series, INSERT … SELECT;
// never the API), reports the table and index sizes it produced, and runs the provider's real
// purge of the expired rows while a load row runs.
//
// Sizes at BENCH_DATA_SCALE=1 (the issue's): 1M users, 5M refresh tokens in 1.25M families,
// 10M access-token rows, 1M consents. Half go to the benchmark platform itself (so the measured
// rows' lookups go through the same big tables and indexes, including the per-platform
// (platform_id, email_normalized) index), half to a second "Big" platform created through the
// admin CLI. Rows have the real schema's columns and value shapes (migrations/, src/repositories/):
// v4-shaped UUIDs, SHA-256 base64url token hashes (src/crypto/digest.ts), argon2id-encoded
// password hashes, 30-day refresh tokens rotated every few hours to days (4 per family, the
// older ones rotated), 1-hour access tokens, and a share already expired (abandoned families,
// a backlog of access tokens): about 1M expired rows at scale 1, which the purge step removes.
import path from 'node:path';
import { Client } from 'pg';
import { knex } from 'knex';
import { APP_DIR } from './ours';

export const LARGE_SIZES = {
  users: 1_000_000,
  refreshTokens: 5_000_000,
  // Access tokens have had no row since migration 20261205090000 (docs/decisions.md, "Access tokens
  // without a row"): the rows of an earlier version are gone within an hour of the upgrade.
  accessTokens: 0,
  consents: 1_000_000,
} as const;
/** Refresh tokens per family: the live one and three rotated ones kept until they expire. */
const TOKENS_PER_FAMILY = 4;
/** SQL-made clients per platform (the benchmark platform's first one is its real client). */
const CLIENTS_PER_PLATFORM = 8;
/** Rows per INSERT statement (one transaction each), so progress shows and no transaction is huge. */
const CHUNK = 500_000;

export interface PlatformCounts {
  users: number;
  families: number;
  refreshTokens: number;
  accessTokens: number;
  consents: number;
  clients: number;
}

export interface LoadReport {
  scale: number;
  seconds: number;
  steps: { step: string; rows: number; seconds: number }[];
  counts: Record<string, number>;
  expired: { accessTokens: number; refreshTokens: number };
}

export interface TableSize {
  table: string;
  rows: number;
  totalBytes: number;
  tableBytes: number;
  indexBytes: number;
  indexes: { name: string; bytes: number }[];
}

type Log = (msg: string) => void;

export async function withClient<T>(url: string, fn: (c: Client) => Promise<T>): Promise<T> {
  const c = new Client({ connectionString: url });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

// Session helpers (pg_temp: they vanish with the loading connection, nothing is left in the schema).
// Single-expression SQL functions without FROM, so the planner inlines them.
const HELPERS = `
CREATE OR REPLACE FUNCTION pg_temp.lk_uuid(t text) RETURNS uuid LANGUAGE sql IMMUTABLE AS
  $$ SELECT (substr(md5(t), 1, 12) || '4' || substr(md5(t), 14, 3) || '8' || substr(md5(t), 18, 15))::uuid $$;
CREATE OR REPLACE FUNCTION pg_temp.lk_b64url(b bytea) RETURNS text LANGUAGE sql IMMUTABLE AS
  $$ SELECT rtrim(translate(encode(b, 'base64'), '+/', '-_'), '=') $$;
CREATE OR REPLACE FUNCTION pg_temp.lk_hash(t text) RETURNS text LANGUAGE sql IMMUTABLE AS
  $$ SELECT pg_temp.lk_b64url(sha256(convert_to(t, 'UTF8'))) $$;
CREATE OR REPLACE FUNCTION pg_temp.lk_frac(n bigint, k bigint) RETURNS float8 LANGUAGE sql IMMUTABLE AS
  $$ SELECT ((n * k) % 1000003) / 1000003.0 $$;
`;

// Session settings for the load only: nothing here changes the server or the measured sessions.
// session_replication_role=replica skips the FK triggers (rows are consistent by construction);
// synchronous_commit=off only for this loader's commits.
const SESSION = `SET session_replication_role = replica; SET synchronous_commit = off; SET maintenance_work_mem = '256MB';`;

export interface PlatformSpec {
  tag: string;
  id: string;
  firstClientId?: string;
  n: PlatformCounts;
}

/** Client k of a platform: the real benchmark client for k = 0 on the benchmark platform. */
const clientExpr = (p: PlatformSpec, k: string) =>
  p.firstClientId
    ? `(CASE WHEN ${k} = 0 THEN '${p.firstClientId}'::uuid ELSE pg_temp.lk_uuid('lk-client:${p.tag}:' || ${k}) END)`
    : `pg_temp.lk_uuid('lk-client:${p.tag}:' || ${k})`;
export const userExpr = (p: PlatformSpec, i: string) => `pg_temp.lk_uuid('lk-user:${p.tag}:' || ${i})`;
const familyExpr = (p: PlatformSpec, f: string) => `pg_temp.lk_uuid('lk-family:${p.tag}:' || ${f})`;
/** 4% of families are abandoned: their last rotation was 31–60 days ago, so all their tokens expired. */
const abandoned = (f: string) => `((${f}) % 100 < 4)`;
/** Age of a family's live (last) token, and the gap between its rotations. */
const lastAge = (f: string) =>
  `(CASE WHEN ${abandoned(f)} THEN interval '31 days' + pg_temp.lk_frac(${f}, 7919) * interval '29 days' ELSE pg_temp.lk_frac(${f}, 7919) * interval '7 days' END)`;
const rotationGap = (f: string) => `(interval '1 hour' + pg_temp.lk_frac(${f}, 104729) * interval '7 days')`;

function clientsSql(p: PlatformSpec): string {
  const from = p.firstClientId ? 1 : 0;
  return `INSERT INTO clients (id, platform_id, name, type, redirect_uris, post_logout_redirect_uris, allowed_scopes, sealed_secret, created_at)
SELECT ${clientExpr(p, 'k')}, '${p.id}', 'App ' || k, CASE WHEN k % 4 = 3 THEN 'public' ELSE 'confidential' END,
       ARRAY['https://app' || k || '.${p.tag}.example.com/callback'], ARRAY['https://app' || k || '.${p.tag}.example.com/'],
       ARRAY['openid', 'profile', 'email', 'phone', 'address', 'offline_access'],
       CASE WHEN k % 4 = 3 THEN NULL ELSE 'v1.' || substr(pg_temp.lk_hash('iv' || k), 1, 16) || '.' || pg_temp.lk_hash('ct' || k) || pg_temp.lk_hash('ct2' || k) || '.' || substr(pg_temp.lk_hash('tag' || k), 1, 22) END,
       now() - (k * interval '37 days')
FROM generate_series(${from}::bigint, ${p.n.clients - 1}::bigint) AS k`;
}

export function usersSql(p: PlatformSpec, lo: number, hi: number): string {
  return `INSERT INTO users (id, platform_id, email, email_normalized, email_verified, password_hash, given_name, family_name, middle_name, nickname,
                   preferred_username, birthdate, phone_number, address, picture_url, created_at, updated_at, sessions_valid_after, disabled_at)
SELECT ${userExpr(p, 'i')}, '${p.id}', e.email, lower(e.email), i % 10 <> 0,
       '$argon2id$v=19$m=19456,t=2,p=1$' || rtrim(encode(substr(sha256(convert_to('salt' || i, 'UTF8')), 1, 16), 'base64'), '=') || '$' || rtrim(encode(sha256(convert_to('${p.tag}pw' || i, 'UTF8')), 'base64'), '='),
       n.given, n.family, CASE WHEN i % 7 = 0 THEN 'Lee' END, CASE WHEN i % 11 = 0 THEN lower(n.given) || i % 100 END,
       lower(n.given) || '.' || lower(n.family), date '1950-01-01' + (i * 7919 % 20000)::int,
       CASE WHEN i % 5 < 3 THEN '+1555' || lpad((i % 10000000)::text, 7, '0') END,
       CASE WHEN i % 10 < 3 THEN jsonb_build_object('street_address', (i % 999 + 1) || ' Main Street', 'locality', 'Springfield', 'region', 'IL', 'postal_code', lpad((i % 99999)::text, 5, '0'), 'country', 'US') END,
       NULL, t.created, t.created + pg_temp.lk_frac(i, 31) * (now() - t.created),
       CASE WHEN i % 50 = 0 THEN t.created + interval '1 day' END, CASE WHEN i % 1000 = 0 THEN now() - interval '3 days' END
FROM generate_series(${lo}::bigint, ${hi - 1}::bigint) AS i
CROSS JOIN LATERAL (SELECT (ARRAY['Ada','Ben','Chloé','Dmitri','Emma','Farid','Grace','Hiro','Inès','Jonas','Kemal','Lena','Mateo','Nora','Omar','Priya'])[1 + (i % 16)::int] AS given,
                           (ARRAY['Smith','García','Müller','Rossi','Kowalski','Nguyen','Okafor','Tanaka','Silva','Dubois','Jensen','Novak','Khan','Ivanova'])[1 + ((i / 16) % 14)::int] AS family) n
CROSS JOIN LATERAL (SELECT translate(lower(n.given) || '.' || lower(n.family), 'éèüñçí', 'eeunci') || '.' || i || '@' || (ARRAY['example.com','example.org','mail.example.net'])[1 + (i % 3)::int] AS email) e
CROSS JOIN LATERAL (SELECT now() - pg_temp.lk_frac(i, 104729) * interval '1095 days' AS created) t`;
}

function familiesSql(p: PlatformSpec, lo: number, hi: number): string {
  const { users: U, clients: C } = p.n;
  return `INSERT INTO refresh_token_families (id, platform_id, client_id, user_id, code_id, scope, auth_time, browser_session_id, revoked_at, created_at, amr, acr)
SELECT ${familyExpr(p, 'f')}, '${p.id}', ${clientExpr(p, `((f / ${U}) % ${C})`)}, ${userExpr(p, `(f % ${U})`)},
       pg_temp.lk_uuid('lk-code:${p.tag}:' || f), CASE WHEN f % 3 = 0 THEN 'openid profile email phone offline_access' ELSE 'openid profile email offline_access' END,
       t.created, CASE WHEN f % 2 = 0 THEN substr(pg_temp.lk_hash('sid${p.tag}' || f), 1, 32) END,
       CASE WHEN f % 50 = 1 THEN now() - pg_temp.lk_frac(f, 13) * ${lastAge('f')} END, t.created, CASE WHEN f % 10 = 0 THEN 'pwd otp mfa' ELSE 'pwd' END, NULL
FROM generate_series(${lo}::bigint, ${hi - 1}::bigint) AS f
CROSS JOIN LATERAL (SELECT now() - ${lastAge('f')} - ${TOKENS_PER_FAMILY - 1} * ${rotationGap('f')} AS created) t`;
}

function refreshTokensSql(p: PlatformSpec, lo: number, hi: number): string {
  return `INSERT INTO refresh_tokens (id, family_id, token_hash, rotated_at, expires_at, created_at)
SELECT pg_temp.lk_uuid('lk-rt:${p.tag}:' || j), ${familyExpr(p, 'x.f')}, pg_temp.lk_hash('rt:${p.tag}:' || j),
       CASE WHEN x.k < ${TOKENS_PER_FAMILY - 1} THEN t.created + ${rotationGap('x.f')} END, t.created + interval '30 days', t.created
FROM generate_series(${lo}::bigint, ${hi - 1}::bigint) AS j
CROSS JOIN LATERAL (SELECT j / ${TOKENS_PER_FAMILY} AS f, j % ${TOKENS_PER_FAMILY} AS k) x
CROSS JOIN LATERAL (SELECT now() - ${lastAge('x.f')} - (${TOKENS_PER_FAMILY - 1} - x.k) * ${rotationGap('x.f')} AS created) t`;
}

/**
 * 80% of access tokens belong to a family (issued by a code exchange with offline_access or a
 * refresh); those of abandoned families expired with them. Of the rest, 5% are a backlog that
 * expired in the last day; the live ones were issued in the last 55 minutes (1-hour lifetime).
 */
function accessTokensSql(p: PlatformSpec, lo: number, hi: number): string {
  const { users: U, clients: C, families: F } = p.n;
  return `INSERT INTO access_tokens (jti_hash, platform_id, client_id, user_id, scope, family_id, code_id, expires_at, revoked_at, created_at)
SELECT pg_temp.lk_hash('at:${p.tag}:' || i), '${p.id}',
       CASE WHEN x.fam THEN ${clientExpr(p, `((x.f / ${U}) % ${C})`)} ELSE ${clientExpr(p, `((i / ${U}) % ${C})`)} END,
       CASE WHEN x.fam THEN ${userExpr(p, `(x.f % ${U})`)} ELSE ${userExpr(p, `(i % ${U})`)} END,
       CASE WHEN x.fam THEN 'openid profile email offline_access' ELSE 'openid profile email' END,
       CASE WHEN x.fam THEN ${familyExpr(p, 'x.f')} END,
       CASE WHEN NOT x.fam OR i % 7 = 1 THEN pg_temp.lk_uuid('lk-atcode:${p.tag}:' || i) END,
       t.created + interval '1 hour', CASE WHEN i % 100 = 42 THEN t.created + interval '5 minutes' END, t.created
FROM generate_series(${lo}::bigint, ${hi - 1}::bigint) AS i
CROSS JOIN LATERAL (SELECT i % 5 <> 0 AS fam, (i * 7919) % ${F} AS f) x
CROSS JOIN LATERAL (SELECT CASE
         WHEN x.fam AND ${abandoned('x.f')} THEN now() - ${lastAge('x.f')} + pg_temp.lk_frac(i, 17) * interval '1 hour'
         WHEN i % 100 < 5 THEN now() - interval '1 hour' - pg_temp.lk_frac(i, 31) * interval '23 hours'
         ELSE now() - pg_temp.lk_frac(i, 104729) * interval '55 minutes' END AS created) t`;
}

function consentsSql(p: PlatformSpec, lo: number, hi: number): string {
  const { users: U, clients: C } = p.n;
  return `INSERT INTO consents (user_id, client_id, platform_id, scopes, created_at, updated_at)
SELECT ${userExpr(p, `(c % ${U})`)}, ${clientExpr(p, `((c / ${U}) % ${C})`)}, '${p.id}',
       CASE WHEN c % 3 = 0 THEN ARRAY['openid','profile','email','phone','offline_access'] ELSE ARRAY['openid','profile','email','offline_access'] END,
       t.created, t.created + pg_temp.lk_frac(c, 31) * (now() - t.created)
FROM generate_series(${lo}::bigint, ${hi - 1}::bigint) AS c
CROSS JOIN LATERAL (SELECT now() - pg_temp.lk_frac(c, 104729) * interval '900 days' AS created) t`;
}

/** Counts for one of the two platforms at `scale` (each holds half of the issue's sizes). */
export function platformCounts(scale: number): PlatformCounts {
  const half = (n: number) => Math.max(1, Math.round((n * scale) / 2));
  const refreshTokens = half(LARGE_SIZES.refreshTokens);
  const families = Math.max(1, Math.floor(refreshTokens / TOKENS_PER_FAMILY));
  const users = half(LARGE_SIZES.users);
  // Consents pair each user with one client first, so (user, client) stays unique.
  return {
    users,
    families,
    refreshTokens: families * TOKENS_PER_FAMILY,
    accessTokens: half(LARGE_SIZES.accessTokens),
    consents: Math.min(half(LARGE_SIZES.consents), users * CLIENTS_PER_PLATFORM),
    clients: CLIENTS_PER_PLATFORM,
  };
}

/**
 * Loads both platforms' rows. `bench` is the running benchmark platform (its real client becomes
 * client 0 of its SQL rows); `big` is a second platform created beforehand (admin CLI).
 * Two loader connections in parallel: access tokens (the biggest table) on one, the rest on the other.
 */
export async function loadLargeData(
  databaseUrl: string,
  scale: number,
  platforms: { bench: { id: string; clientId: string }; big: { id: string } },
  log: Log,
): Promise<LoadReport> {
  const n = platformCounts(scale);
  const specs: PlatformSpec[] = [
    { tag: 'bench', id: platforms.bench.id, firstClientId: platforms.bench.clientId, n },
    { tag: 'big', id: platforms.big.id, n },
  ];
  const steps: LoadReport['steps'] = [];
  const t0 = performance.now();

  const run = async (
    c: Client,
    step: string,
    total: number,
    sql: (p: PlatformSpec, lo: number, hi: number) => string,
  ) => {
    for (const p of specs) {
      const t = performance.now();
      let rows = 0;
      for (let lo = 0; lo < total; lo += CHUNK) {
        const tc = performance.now();
        const r = await c.query(sql(p, lo, Math.min(total, lo + CHUNK)));
        rows += r.rowCount ?? 0;
        if (total > CHUNK)
          log(
            `      ${step} (${p.tag}): ${rows.toLocaleString('en-US')} / ${total.toLocaleString('en-US')} (chunk ${((performance.now() - tc) / 1000).toFixed(1)} s)`,
          );
      }
      const s = (performance.now() - t) / 1000;
      steps.push({ step: `${step} (${p.tag})`, rows, seconds: s });
      log(`    ${step} (${p.tag}): ${rows.toLocaleString('en-US')} rows in ${s.toFixed(1)} s`);
    }
  };
  const session = (fn: (c: Client) => Promise<void>) => withLoader(databaseUrl, fn);

  // Building an index once over sorted rows is far cheaper than growing it by millions of random
  // inserts (each touching a page outside shared_buffers, a full-page image after every checkpoint):
  // every index no foreign key depends on is dropped for the load and rebuilt after it, with the
  // exact definition it had (pg_get_indexdef / pg_get_constraintdef).
  const saved = await dropIndexesForLoad(databaseUrl, LOADED_TABLES, steps, log);
  try {
    await Promise.all([
      session(async (c) => {
        for (const p of specs) await c.query(clientsSql(p));
        await run(c, 'users', n.users, usersSql);
        await run(c, 'consents', n.consents, consentsSql);
        await run(c, 'refresh_token_families', n.families, familiesSql);
        await run(c, 'refresh_tokens', n.refreshTokens, refreshTokensSql);
      }),
      session((c) => run(c, 'access_tokens', n.accessTokens, accessTokensSql)),
    ]);
  } finally {
    // Two connections: the access-token indexes on one, every other table's on the other.
    await rebuildIndexes(databaseUrl, saved, (x) => x.table === 'access_tokens', steps, log);
  }

  // A platform in steady state has been vacuumed and analysed (visibility map, planner statistics);
  // the checkpoint keeps the load's dirty pages from being written during the measured rows.
  const tv = performance.now();
  await withClient(databaseUrl, async (c) => {
    await c.query(`VACUUM (ANALYZE) users, consents, clients, refresh_token_families, refresh_tokens, access_tokens`);
    await c.query('CHECKPOINT');
  });
  steps.push({ step: 'VACUUM (ANALYZE) + CHECKPOINT', rows: 0, seconds: (performance.now() - tv) / 1000 });
  log(`    VACUUM (ANALYZE) + CHECKPOINT in ${((performance.now() - tv) / 1000).toFixed(1)} s`);

  const { counts, expired } = await withClient(databaseUrl, async (c) => {
    const counts: Record<string, number> = {};
    for (const t of ['users', 'consents', 'clients', 'refresh_token_families', 'refresh_tokens', 'access_tokens']) {
      counts[t] = Number((await c.query(`SELECT count(*) AS n FROM ${t}`)).rows[0].n);
    }
    const at = Number((await c.query(`SELECT count(*) AS n FROM access_tokens WHERE expires_at < now()`)).rows[0].n);
    const rt = Number((await c.query(`SELECT count(*) AS n FROM refresh_tokens WHERE expires_at < now()`)).rows[0].n);
    return { counts, expired: { accessTokens: at, refreshTokens: rt } };
  });
  return { scale, seconds: (performance.now() - t0) / 1000, steps, counts, expired };
}

/**
 * A loading connection: FK triggers skipped and commits asynchronous for this session only, with
 * the pg_temp helpers (lk_uuid, lk_hash, …) defined.
 */
export function withLoader<T>(databaseUrl: string, fn: (c: Client) => Promise<T>): Promise<T> {
  return withClient(databaseUrl, async (c) => {
    await c.query(SESSION);
    await c.query(HELPERS);
    return fn(c);
  });
}

type Steps = LoadReport['steps'];

/** Drops the indexes of `tables` no foreign key depends on (see dropIndexes), timed as a step. */
export async function dropIndexesForLoad(
  databaseUrl: string,
  tables: string[],
  steps: Steps,
  log: Log,
): Promise<SavedIndex[]> {
  const td = performance.now();
  const saved = await withClient(databaseUrl, (c) => dropIndexes(c, tables));
  steps.push({
    step: `drop ${saved.length} indexes no foreign key depends on`,
    rows: 0,
    seconds: (performance.now() - td) / 1000,
  });
  log(`    dropped for the load: ${saved.map((x) => x.name).join(', ')}`);
  return saved;
}

/** Recreates dropped indexes on two connections: those `first` picks on one, the rest on the other. */
export async function rebuildIndexes(
  databaseUrl: string,
  saved: SavedIndex[],
  first: (x: SavedIndex) => boolean,
  steps: Steps,
  log: Log,
): Promise<void> {
  const tr = performance.now();
  const parts = [saved.filter(first), saved.filter((x) => !first(x))];
  await Promise.all(
    parts.map((list) =>
      withClient(databaseUrl, async (c) => {
        await c.query(`SET maintenance_work_mem = '512MB'`);
        for (const x of list) {
          const t = performance.now();
          await c.query(x.create);
          log(`    rebuilt ${x.name} in ${((performance.now() - t) / 1000).toFixed(1)} s`);
        }
      }),
    ),
  );
  steps.push({ step: `rebuild the ${saved.length} indexes`, rows: 0, seconds: (performance.now() - tr) / 1000 });
}

const LOADED_TABLES = ['users', 'consents', 'refresh_token_families', 'refresh_tokens', 'access_tokens'];

export interface SavedIndex {
  table: string;
  name: string;
  create: string;
}

/**
 * Drops the indexes of `tables` that no foreign key depends on (plain indexes, and primary-key or
 * unique constraints no foreign key references) and returns the statements that recreate them.
 */
async function dropIndexes(c: Client, tables: string[]): Promise<SavedIndex[]> {
  const { rows } = await c.query(
    `SELECT i.indrelid::regclass::text AS tbl, ci.relname AS name, pg_get_indexdef(i.indexrelid) AS def,
            con.conname, CASE WHEN con.oid IS NOT NULL THEN pg_get_constraintdef(con.oid) END AS condef
       FROM pg_index i
       JOIN pg_class ci ON ci.oid = i.indexrelid
       LEFT JOIN pg_constraint con ON con.conindid = i.indexrelid AND con.conrelid = i.indrelid AND con.contype IN ('p', 'u')
      WHERE i.indrelid = ANY($1::regclass[])
        AND NOT EXISTS (SELECT 1 FROM pg_constraint f WHERE f.contype = 'f' AND f.conindid = i.indexrelid)
      ORDER BY 1, 2`,
    [tables],
  );
  const out: SavedIndex[] = [];
  for (const r of rows) {
    const q = (id: string) => `"${String(id).replace(/"/g, '""')}"`;
    if (r.conname) {
      await c.query(`ALTER TABLE ${q(r.tbl)} DROP CONSTRAINT ${q(r.conname)}`);
      out.push({
        table: r.tbl,
        name: r.name,
        create: `ALTER TABLE ${q(r.tbl)} ADD CONSTRAINT ${q(r.conname)} ${r.condef}`,
      });
    } else {
      await c.query(`DROP INDEX ${q(r.name)}`);
      out.push({ table: r.tbl, name: r.name, create: r.def });
    }
  }
  return out;
}

/** Consistency of the generated rows: every foreign key the load skipped checking holds. */
export async function checkForeignKeys(databaseUrl: string): Promise<string[]> {
  const checks: [string, string][] = [
    [
      'users → platforms',
      `SELECT count(*) AS n FROM users u WHERE NOT EXISTS (SELECT 1 FROM platforms p WHERE p.id = u.platform_id)`,
    ],
    [
      'consents → users',
      `SELECT count(*) AS n FROM consents c WHERE NOT EXISTS (SELECT 1 FROM users u WHERE u.id = c.user_id AND u.platform_id = c.platform_id)`,
    ],
    [
      'consents → clients',
      `SELECT count(*) AS n FROM consents c WHERE NOT EXISTS (SELECT 1 FROM clients k WHERE k.id = c.client_id AND k.platform_id = c.platform_id)`,
    ],
    [
      'families → users',
      `SELECT count(*) AS n FROM refresh_token_families f WHERE NOT EXISTS (SELECT 1 FROM users u WHERE u.id = f.user_id AND u.platform_id = f.platform_id)`,
    ],
    [
      'families → clients',
      `SELECT count(*) AS n FROM refresh_token_families f WHERE NOT EXISTS (SELECT 1 FROM clients k WHERE k.id = f.client_id AND k.platform_id = f.platform_id)`,
    ],
    [
      'refresh_tokens → families',
      `SELECT count(*) AS n FROM refresh_tokens t WHERE NOT EXISTS (SELECT 1 FROM refresh_token_families f WHERE f.id = t.family_id)`,
    ],
    [
      'access_tokens → users',
      `SELECT count(*) AS n FROM access_tokens a WHERE NOT EXISTS (SELECT 1 FROM users u WHERE u.id = a.user_id AND u.platform_id = a.platform_id)`,
    ],
    [
      'access_tokens → clients',
      `SELECT count(*) AS n FROM access_tokens a WHERE NOT EXISTS (SELECT 1 FROM clients k WHERE k.id = a.client_id AND k.platform_id = a.platform_id)`,
    ],
    [
      'access_tokens → families (same user)',
      `SELECT count(*) AS n FROM access_tokens a WHERE a.family_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM refresh_token_families f WHERE f.id = a.family_id AND f.user_id = a.user_id AND f.client_id = a.client_id)`,
    ],
  ];
  return withClient(databaseUrl, async (c) => {
    const bad: string[] = [];
    for (const [name, sql] of checks) {
      const k = Number((await c.query(sql)).rows[0].n);
      if (k) bad.push(`${name}: ${k} orphan rows`);
    }
    return bad;
  });
}

const SIZE_TABLES = ['users', 'consents', 'clients', 'refresh_token_families', 'refresh_tokens', 'access_tokens'];

export async function tableSizes(databaseUrl: string, tables = SIZE_TABLES): Promise<TableSize[]> {
  return withClient(databaseUrl, async (c) => {
    const out: TableSize[] = [];
    for (const t of tables) {
      const r = (
        await c.query(
          `SELECT pg_total_relation_size($1::regclass) AS total, pg_relation_size($1::regclass) AS heap, pg_indexes_size($1::regclass) AS idx, (SELECT count(*) FROM ${t}) AS n`,
          [t],
        )
      ).rows[0];
      const idx = (
        await c.query(
          `SELECT indexrelid::regclass::text AS name, pg_relation_size(indexrelid) AS bytes FROM pg_index WHERE indrelid = $1::regclass ORDER BY 1`,
          [t],
        )
      ).rows;
      out.push({
        table: t,
        rows: Number(r.n),
        totalBytes: Number(r.total),
        tableBytes: Number(r.heap),
        indexBytes: Number(r.idx),
        indexes: idx.map((x) => ({ name: x.name, bytes: Number(x.bytes) })),
      });
    }
    return out;
  });
}

export interface PurgeResult {
  ms: number;
  removed: Record<string, number>;
  error?: string;
}

/**
 * The provider's own purge (dist/services/maintenance.service.js, the function the purge job of
 * src/jobs/purge.job.ts calls on every instance), run from this process on its own connection:
 * the same SQL as another instance's purge timer, against the database the provider serves from.
 */
export async function runProviderPurge(databaseUrl: string): Promise<PurgeResult> {
  const { createMaintenance } = require(path.join(APP_DIR, 'dist', 'services', 'maintenance.service.js')) as {
    createMaintenance: (deps: unknown) => { purgeExpired: () => Promise<Record<string, number>> };
  };
  const { loadConfig } = require(path.join(APP_DIR, 'dist', 'config.js')) as {
    loadConfig: (env: Record<string, string>) => unknown;
  };
  const db = knex({ client: 'pg', connection: databaseUrl, pool: { min: 1, max: 2 } });
  const t = performance.now();
  try {
    // The provider's own defaults for every lifetime the purge reads (src/config.ts).
    const config = loadConfig({ NODE_ENV: 'development', DATABASE_URL: databaseUrl });
    const removed = await createMaintenance({ db, now: () => new Date(), config }).purgeExpired();
    return { ms: performance.now() - t, removed };
  } catch (err) {
    return { ms: performance.now() - t, removed: {}, error: (err as Error).message };
  } finally {
    await db.destroy();
  }
}

export const mib = (b: number) => (b / 2 ** 20).toFixed(1);
