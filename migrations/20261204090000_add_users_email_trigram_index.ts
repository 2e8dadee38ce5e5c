// The admin's user search matches any part of the address (`email_normalized LIKE '%…%'`), which a
// B-tree cannot serve: at 1M users a search few addresses match read every row (p99 ≈ 0.9 s,
// bench/README.md, admin mode). A trigram index serves it for three characters and more
// (docs/decisions.md, "Admin lists stay fast on a large platform"). pg_trgm is a trusted extension
// (Postgres 13+: a database owner may create it) shipped with Postgres's contrib, and loaded into
// the embedded database. A role that may not create it keeps the search as it was (a scan), rather
// than a provider that cannot start after an upgrade.
import type { Knex } from 'knex';

const NOT_PERMITTED = new Set(['42501', '58P01']); // insufficient_privilege; the extension's files not installed

export async function up(knex: Knex): Promise<void> {
  await knex.raw('SAVEPOINT trigram');
  try {
    await knex.raw('CREATE EXTENSION IF NOT EXISTS pg_trgm');
  } catch (err) {
    if (!NOT_PERMITTED.has((err as { code?: string }).code ?? '')) throw err;
    await knex.raw('ROLLBACK TO SAVEPOINT trigram');
    return;
  }
  await knex.raw('CREATE INDEX users_email_normalized_trgm_index ON users USING gin (email_normalized gin_trgm_ops)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS users_email_normalized_trgm_index');
}
