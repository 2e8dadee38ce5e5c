// A client named by a Client ID Metadata Document is stored as a row of its platform, so codes,
// tokens, consents, sign-ins and audit events keep referencing clients.id (a UUID); the URL it is
// known by on the wire is kept beside it, one row per platform and URL. The purge of never-used
// self-registered clients now covers both sources.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('clients', (t) => {
    t.text('metadata_document_url');
  });
  await knex.raw(
    'CREATE UNIQUE INDEX clients_platform_metadata_document_url ON clients (platform_id, metadata_document_url) WHERE metadata_document_url IS NOT NULL',
  );
  await knex.raw('DROP INDEX IF EXISTS clients_unused_dynamic');
  await knex.raw(
    "CREATE INDEX clients_unused_self_registered ON clients (created_at) WHERE registration_source IN ('dynamic', 'metadata_document') AND last_used_at IS NULL",
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS clients_unused_self_registered');
  await knex.raw(
    "CREATE INDEX clients_unused_dynamic ON clients (created_at) WHERE registration_source = 'dynamic' AND last_used_at IS NULL",
  );
  await knex.raw('DROP INDEX IF EXISTS clients_platform_metadata_document_url');
  await knex.schema.alterTable('clients', (t) => {
    t.dropColumn('metadata_document_url');
  });
}
