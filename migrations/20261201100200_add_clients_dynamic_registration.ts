// Clients that registered themselves (RFC 7591) beside those an operator made: where a client came
// from, the digest of its registration access token (RFC 7592), its application_type, the metadata
// it registered that only it reads back, and when it first completed a token request (a client
// that never does is purged after UNUSED_REGISTERED_CLIENT_TTL_SECONDS).
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('clients', (t) => {
    // admin | dynamic
    t.text('registration_source').notNullable().defaultTo('admin');
    t.text('registration_access_token_hash');
    // web | native (dynamic clients; null for an operator's)
    t.text('application_type');
    // token_endpoint_auth_method, grant_types, response_types, contacts, software_id, software_version
    t.jsonb('registration_metadata');
    t.timestamp('last_used_at', { useTz: true });
  });
  // The purge's search: never-used self-registered clients, oldest first.
  await knex.raw(
    "CREATE INDEX clients_unused_dynamic ON clients (created_at) WHERE registration_source = 'dynamic' AND last_used_at IS NULL",
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS clients_unused_dynamic');
  await knex.schema.alterTable('clients', (t) => {
    t.dropColumn('last_used_at');
    t.dropColumn('registration_metadata');
    t.dropColumn('application_type');
    t.dropColumn('registration_access_token_hash');
    t.dropColumn('registration_source');
  });
}
