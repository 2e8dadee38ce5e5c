// The tables written on every sign-in and grant no longer carry foreign keys to platforms and
// clients (docs/decisions.md, "Grant tables without foreign keys to platforms and clients"): a
// foreign key check takes a KEY SHARE lock on the parent row, and every grant of a client locks
// the same client and platform rows, so concurrent grants pile up MultiXacts on them. Deleting a
// client deletes these rows explicitly (src/repositories/client.repository.ts), and there is no
// platform deletion. The keys to users (one row per person) and to refresh families stay.
import type { Knex } from 'knex';

const DROPPED: Array<[table: string, column: 'platform_id' | 'client_id']> = [
  ['authorization_codes', 'platform_id'],
  ['authorization_codes', 'client_id'],
  ['refresh_token_families', 'platform_id'],
  ['refresh_token_families', 'client_id'],
  ['access_tokens', 'platform_id'],
  ['access_tokens', 'client_id'],
  ['session_clients', 'platform_id'],
  ['session_clients', 'client_id'],
  ['consents', 'platform_id'],
  ['consents', 'client_id'],
  ['device_authorizations', 'platform_id'],
  ['device_authorizations', 'client_id'],
  ['client_assertion_jtis', 'client_id'],
];

export async function up(knex: Knex): Promise<void> {
  for (const [table, column] of DROPPED)
    await knex.raw(`ALTER TABLE ${table} DROP CONSTRAINT IF EXISTS ${table}_${column}_foreign`);
}

export async function down(knex: Knex): Promise<void> {
  for (const [table, column] of DROPPED) {
    const parent = column === 'platform_id' ? 'platforms' : 'clients';
    await knex.raw(
      `ALTER TABLE ${table} ADD CONSTRAINT ${table}_${column}_foreign FOREIGN KEY (${column}) REFERENCES ${parent}(id) ON DELETE CASCADE`,
    );
  }
}
