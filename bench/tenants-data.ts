// The tenants mode's data (BENCH_DATA=tenants): many platforms, each with its own client and keys.
// One template platform is made through the admin CLI (bench/machines.ts: a standard platform, its
// HS512 and asymmetric signing keys sealed under the provider's MASTER_KEY, one resource and one
// confidential client allowed client credentials); every other platform is a copy of its rows made
// with SQL (INSERT … SELECT over generate_series), with new ids and kids. Generating an RSA, EC and
// Ed25519 key pair per platform through the service would take minutes at 10,000; copying keeps each
// platform's rows real (sealed key material the provider unseals and imports per platform, the client
// secret sealed likewise), at the price of every copy sharing the template's key material and client
// secret — which changes nothing for the provider: it caches, unseals and imports per platform.
import type { Client } from 'pg';
import { withClient, withLoader } from './large-data';

/** What a copy takes from the template: the tables it copies, the columns given new values. */
const COPIED: { table: string; key: string; fresh: Record<string, string> }[] = [
  {
    table: 'platforms',
    key: 'id',
    fresh: { id: `pg_temp.lk_uuid('lk-tenant:' || i)`, name: `'Tenant ' || i` },
  },
  {
    table: 'signing_keys',
    key: 'platform_id',
    fresh: {
      kid: `pg_temp.lk_uuid('lk-tenant-kid:' || i || ':' || t.kid)::text`,
      platform_id: `pg_temp.lk_uuid('lk-tenant:' || i)`,
    },
  },
  {
    table: 'resources',
    key: 'platform_id',
    fresh: {
      id: `pg_temp.lk_uuid('lk-tenant-resource:' || i || ':' || t.id)`,
      platform_id: `pg_temp.lk_uuid('lk-tenant:' || i)`,
    },
  },
  {
    table: 'clients',
    key: 'platform_id',
    fresh: {
      id: `pg_temp.lk_uuid('lk-tenant-client:' || i || ':' || t.id)`,
      platform_id: `pg_temp.lk_uuid('lk-tenant:' || i)`,
    },
  },
];

export interface TenantsLoad {
  seconds: number;
  copies: number;
  rows: Record<string, number>;
  /** Tables holding rows of the template that the copy leaves out (should be none but the audit log). */
  notCopied: string[];
}

async function columnsOf(c: Client, table: string): Promise<string[]> {
  const { rows } = await c.query(
    `SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1 AND is_generated = 'NEVER' ORDER BY ordinal_position`,
    [table],
  );
  return rows.map((r) => String(r.column_name));
}

/** Copies the template platform's rows `copies` times (platforms 1…copies), in one transaction per table. */
export async function copyPlatform(
  databaseUrl: string,
  templateId: string,
  copies: number,
  log: (m: string) => void,
): Promise<TenantsLoad> {
  const t0 = performance.now();
  const rows: Record<string, number> = {};
  await withLoader(databaseUrl, async (c) => {
    for (const { table, key, fresh } of COPIED) {
      const cols = await columnsOf(c, table);
      const t = performance.now();
      const r = await c.query(
        `INSERT INTO ${table} (${cols.join(', ')})
         SELECT ${cols.map((col) => fresh[col] ?? `t.${col}`).join(', ')}
           FROM ${table} t CROSS JOIN generate_series(1, ${copies}) AS i
          WHERE t.${key} = $1`,
        [templateId],
      );
      rows[table] = r.rowCount ?? 0;
      log(
        `    ${table}: ${rows[table].toLocaleString('en-US')} rows in ${((performance.now() - t) / 1000).toFixed(1)} s`,
      );
    }
    await c.query(`ANALYZE ${COPIED.map((x) => x.table).join(', ')}`);
  });
  return {
    seconds: (performance.now() - t0) / 1000,
    copies,
    rows,
    notCopied: await notCopied(databaseUrl, templateId),
  };
}

/** Every table with a platform_id column that holds rows of the template but is not copied. */
async function notCopied(databaseUrl: string, templateId: string): Promise<string[]> {
  return withClient(databaseUrl, async (c) => {
    const { rows } = await c.query(
      `SELECT table_name FROM information_schema.columns WHERE table_schema = current_schema() AND column_name = 'platform_id' ORDER BY 1`,
    );
    const out: string[] = [];
    for (const { table_name: t } of rows) {
      if (COPIED.some((x) => x.table === t)) continue;
      const n = Number(
        (await c.query(`SELECT count(*) AS n FROM "${t}" WHERE platform_id = $1`, [templateId])).rows[0].n,
      );
      if (n) out.push(`${t} (${n})`);
    }
    return out;
  });
}

/** Every platform's id with its client allowed client credentials, in a stable order. */
export async function tenantClients(databaseUrl: string): Promise<{ platformGuid: string; clientId: string }[]> {
  return withClient(databaseUrl, async (c) => {
    const { rows } = await c.query(
      `SELECT DISTINCT ON (p.id) p.id AS platform, c.id AS client
         FROM platforms p JOIN clients c ON c.platform_id = p.id AND 'client_credentials' = ANY (c.grant_types)
        ORDER BY p.id, c.created_at, c.id`,
    );
    return rows.map((r) => ({ platformGuid: String(r.platform), clientId: String(r.client) }));
  });
}
